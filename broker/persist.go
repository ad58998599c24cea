package broker

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/rocketgo/rocketgo/compat/configfile"
)

// writeConfigFile replaces path with data atomically, keeping the old
// content as path.bak (Java's ConfigManager.persist).
func writeConfigFile(path string, data []byte) error {
	return configfile.Write(path, data)
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
	b, err := configfile.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
