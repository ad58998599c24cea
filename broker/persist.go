package broker

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeConfigFile replaces path with data atomically, keeping the old
// content as path.bak (Java's ConfigManager.persist).
func writeConfigFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("config file %s: write: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("config file %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("config file %s: close: %w", path, err)
	}
	if old, err := os.ReadFile(path); err == nil && len(old) > 0 {
		if err := os.WriteFile(path+".bak", old, 0o644); err != nil {
			return fmt.Errorf("config file %s: backup: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("config file %s: rename: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// loadConfigFile decodes the config file at path (or its backup) and hands
// the result to apply; a missing file leaves everything as it was.
func loadConfigFile[T any](path, what string, decode func([]byte) (T, error), apply func(T)) error {
	b, err := readConfigFile(path)
	if err != nil || b == nil {
		return err
	}
	v, err := decode(b)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", what, path, err)
	}
	apply(v)
	return nil
}

// readConfigFile returns the content of path, or of path.bak when path is
// missing or empty; (nil, nil) when neither exists.
func readConfigFile(path string) ([]byte, error) {
	for _, p := range []string{path, path + ".bak"} {
		b, err := os.ReadFile(p)
		if err == nil && len(b) > 0 {
			return b, nil
		}
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("config file %s: %w", p, err)
		}
	}
	return nil, nil
}
