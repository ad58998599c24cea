package configfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data durably, keeping the old content as
// path.bak.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("configfile: %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("configfile: %s: %w", path, err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("configfile: write %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("configfile: sync %s: %w", tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("configfile: close %s: %w", tmpName, err)
	}
	// Keep the previous version (only a non-empty one) as the backup.
	if old, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(old)) > 0 {
		if err := writeSynced(path+".bak", old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("configfile: rename %s: %w", path, err)
	}
	ok = true
	return syncDir(dir)
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("configfile: %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("configfile: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("configfile: sync %s: %w", path, err)
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("configfile: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("configfile: sync dir %s: %w", dir, err)
	}
	return nil
}

// Read returns the content of path, or of path.bak when path is missing or
// empty. It returns an error wrapping fs.ErrNotExist when neither has
// content.
func Read(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil && len(bytes.TrimSpace(data)) > 0 {
		return data, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("configfile: read %s: %w", path, err)
	}
	return ReadBackup(path)
}

// ReadBackup returns the content of path.bak (for callers whose main file
// failed to parse).
func ReadBackup(path string) ([]byte, error) {
	bak, err := os.ReadFile(path + ".bak")
	if err == nil && len(bytes.TrimSpace(bak)) > 0 {
		return bak, nil
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("configfile: %s: %w", path, fs.ErrNotExist)
	}
	return nil, fmt.Errorf("configfile: read %s.bak: %w", path, err)
}
