package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
)

const module = "github.com/rocketgo/rocketgo"

// output is one generated file, path relative to the repo root.
type output struct {
	path string
	src  []byte
}

func main() {
	check := flag.Bool("check", false, "verify generated files are up to date instead of writing them")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	outs, err := generate(root)
	if err != nil {
		return err
	}
	var stale []string
	for _, o := range outs {
		p := filepath.Join(root, o.path)
		old, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("read %s: %w", o.path, err)
		}
		if bytes.Equal(old, o.src) {
			continue
		}
		if check {
			stale = append(stale, o.path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("mkdir for %s: %w", o.path, err)
		}
		if err := os.WriteFile(p, o.src, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", o.path, err)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("stale generated files (run `go run ./codec/internal/gen`): %s", strings.Join(stale, ", "))
	}
	return nil
}

// generate renders every output from the spec files under root.
func generate(root string) ([]output, error) {
	specDir := filepath.Join(root, "codec", "internal", "spec")
	codesSrc, err := os.ReadFile(filepath.Join(specDir, "codes.def"))
	if err != nil {
		return nil, fmt.Errorf("read codes.def: %w", err)
	}
	codes, err := parseCodes(string(codesSrc))
	if err != nil {
		return nil, fmt.Errorf("codes.def: %w", err)
	}
	var outs []output
	src, err := gofmt("codec/codes_gen.go", renderCodes(codes))
	if err != nil {
		return nil, err
	}
	outs = append(outs, output{"codec/codes_gen.go", src})

	hdrSrc, err := os.ReadFile(filepath.Join(specDir, "headers.def"))
	if errors.Is(err, os.ErrNotExist) {
		return outs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read headers.def: %w", err)
	}
	files, err := parseHeaders(string(hdrSrc))
	if err != nil {
		return nil, fmt.Errorf("headers.def: %w", err)
	}
	byName := map[string]*header{}
	for _, hf := range files {
		for _, h := range hf.headers {
			byName[h.goName] = h
		}
	}
	for _, hf := range files {
		path := "codec/header/" + hf.name + "_gen.go"
		src, err := gofmt(path, renderHeaderFile(hf, byName))
		if err != nil {
			return nil, err
		}
		outs = append(outs, output{path, src})
	}
	reg, err := renderRegistry(files, codes)
	if err != nil {
		return nil, fmt.Errorf("headers.def: %w", err)
	}
	src, err = gofmt("codec/header/registry_gen.go", reg)
	if err != nil {
		return nil, err
	}
	outs = append(outs, output{"codec/header/registry_gen.go", src})
	return outs, nil
}

func gofmt(path string, src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w\n%s", path, err, src)
	}
	return out, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getwd: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module "+module+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod of " + module + " not found above the working directory")
		}
		dir = parent
	}
}

// camel turns a Java constant name into Go CamelCase: SEND_MESSAGE_V2 →
// SendMessageV2.
func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(strings.ToLower(part[1:]))
	}
	return b.String()
}
