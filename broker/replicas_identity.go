package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// identity is Java's BrokerMetadata ("cluster#brokerName#brokerId", the
// brokerIdentity file) or, with checkCode, its TempBrokerMetadata
// ("…#registerCheckCode", brokerIdentity-temp).
type identity struct {
	cluster, brokerName string
	brokerID            int64
	checkCode           string
}

func (id identity) encode(withCode bool) string {
	s := id.cluster + "#" + id.brokerName + "#" + strconv.FormatInt(id.brokerID, 10)
	if withCode {
		s += "#" + id.checkCode
	}
	return s
}

// identityFiles are the brokerIdentity file and its "-temp" sibling
// (storePathBrokerIdentity), in Java's format so a store moves between a
// Java broker and ours.
type identityFiles struct {
	path string
}

func (f identityFiles) tempPath() string { return f.path + "-temp" }

// maxIdentityFile bounds what is read (the content is one short line).
const maxIdentityFile = 4096

func readIdentity(path string, withCode bool) (identity, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, err
	}
	if len(b) > maxIdentityFile {
		return identity{}, false, fmt.Errorf("%s: %d bytes, too long", path, len(b))
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return identity{}, false, nil
	}
	parts := strings.Split(s, "#")
	want := 3
	if withCode {
		want = 4
	}
	if len(parts) < want {
		return identity{}, false, fmt.Errorf("%s: %q: want %d '#'-separated fields", path, s, want)
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return identity{}, false, fmt.Errorf("%s: brokerId: %w", path, err)
	}
	out := identity{cluster: parts[0], brokerName: parts[1], brokerID: id}
	if withCode {
		out.checkCode = parts[3]
		if out.checkCode == "" {
			return identity{}, false, nil
		}
	}
	if out.cluster == "" || out.brokerName == "" {
		return identity{}, false, nil
	}
	return out, true, nil
}

func (f identityFiles) read() (identity, bool, error)     { return readIdentity(f.path, false) }
func (f identityFiles) readTemp() (identity, bool, error) { return readIdentity(f.tempPath(), true) }

func (f identityFiles) write(id identity) error { return writeFileSynced(f.path, id.encode(false)) }
func (f identityFiles) writeTemp(id identity) error {
	return writeFileSynced(f.tempPath(), id.encode(true))
}

func (f identityFiles) removeTemp() error {
	if err := os.Remove(f.tempPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeFileSynced replaces path with s crash-safely (temp file, fsync,
// rename).
func writeFileSynced(path, s string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	fh, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fh.WriteString(s); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
