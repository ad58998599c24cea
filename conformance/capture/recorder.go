package capture

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Fixture is the .json description written beside each .frame file.
type Fixture struct {
	Source      string            `json:"source"`
	RequestCode int32             `json:"requestCode"`
	Code        int32             `json:"code"`
	Flag        int32             `json:"flag"`
	Opaque      int32             `json:"opaque"`
	Language    string            `json:"language"`
	Version     int32             `json:"version"`
	Serialize   string            `json:"serialize"`
	Remark      string            `json:"remark"`
	Ext         map[string]string `json:"ext"`
	BodyLen     int               `json:"bodyLen"`
}

// Recorder writes frames as fixtures into Dir, keeping at most PerKind frames
// per (source, direction, request code, frame code, serialization) and skipping frames larger
// than MaxFrameBytes so the fixture set stays small.
type Recorder struct {
	Dir           string
	PerKind       int
	MaxFrameBytes int

	mu     sync.Mutex
	kinds  map[string]int // guarded by mu
	seq    map[string]int // guarded by mu
	errs   []error        // guarded by mu
	Writes []string       // guarded by mu; base names written
}

// NewRecorder makes a recorder writing into dir (created if missing).
func NewRecorder(dir string, perKind, maxFrameBytes int) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("capture: mkdir %s: %w", dir, err)
	}
	return &Recorder{Dir: dir, PerKind: perKind, MaxFrameBytes: maxFrameBytes,
		kinds: map[string]int{}, seq: map[string]int{}}, nil
}

// Slug turns a source label into a file-name part ("java-5.3 broker" → "java-5.3-broker").
func Slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '-'
	}, s)
}

// Frame implements Sink. Frames labelled "" (harness traffic) are not recorded.
func (r *Recorder) Frame(source string, fromClient bool, requestCode int32, raw []byte, f *Frame) {
	if source == "" || len(raw) > r.MaxFrameBytes {
		return
	}
	dir := "req"
	if f.IsResponse() {
		dir = "resp"
	}
	code := requestCode
	if code < 0 {
		code = f.Code
	}
	base := fmt.Sprintf("%s-%s-%d", Slug(source), dir, code)
	r.mu.Lock()
	// Responses are kept per response code too, so a PULL answered FOUND
	// and one answered PULL_NOT_FOUND are both recorded.
	kind := fmt.Sprintf("%s/%d/%s", base, f.Code, f.Serialize)
	if r.kinds[kind] >= r.PerKind {
		r.mu.Unlock()
		return
	}
	r.kinds[kind]++
	r.seq[base]++
	name := fmt.Sprintf("%s-%d", base, r.seq[base])
	r.Writes = append(r.Writes, name)
	r.mu.Unlock()

	fx := Fixture{Source: source, RequestCode: requestCode, Code: f.Code, Flag: f.Flag, Opaque: f.Opaque,
		Language: f.Language, Version: f.Version, Serialize: f.Serialize, Remark: f.Remark,
		Ext: f.Ext, BodyLen: len(f.Body)}
	if fx.Ext == nil {
		fx.Ext = map[string]string{}
	}
	js, err := json.MarshalIndent(fx, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(r.Dir, name+".frame"), raw, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(r.Dir, name+".json"), append(js, '\n'), 0o644)
	}
	if err != nil {
		r.mu.Lock()
		r.errs = append(r.errs, fmt.Errorf("capture: write %s: %w", name, err))
		r.mu.Unlock()
	}
}

// Err returns the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		return r.errs[0]
	}
	return nil
}

// Names returns the base names written so far.
func (r *Recorder) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.Writes...)
}
