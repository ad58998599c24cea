package header

import (
	"bytes"
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// fuzzExt turns fuzz input into extFields: lines of key=value (a line
// without '=' is a key with an empty value).
func fuzzExt(in []byte) []codec.KV {
	var ext []codec.KV
	for _, line := range bytes.Split(in, []byte{'\n'}) {
		k, v, _ := bytes.Cut(line, []byte{'='})
		ext = append(ext, codec.KV{Key: string(k), Value: string(v)})
	}
	return ext
}

// FuzzHeaderDecode feeds the same extFields to every generated header:
// Decode never panics, fails only with a *FieldError, and whatever decodes
// re-encodes to extFields that decode to the same value and encode to the
// same entries again.
func FuzzHeaderDecode(f *testing.F) {
	all := All()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	types := make([]reflect.Type, len(names))
	for i, n := range names {
		types[i] = reflect.TypeOf(all[n]).Elem()
	}
	fresh := func(i int) Header { return reflect.New(types[i]).Interface().(Header) }
	f.Fuzz(func(t *testing.T, in []byte) {
		fr := &codec.Frame{Ext: fuzzExt(in)}
		for i, name := range names {
			h := fresh(i)
			err := h.Decode(fr)
			if err != nil {
				var fe *FieldError
				require.True(t, errors.As(err, &fe), "%s: %v", name, err)
				require.True(t, errors.Is(err, ErrMissingField) || errors.Is(err, ErrInvalidField))
				continue
			}
			var e1 codec.Frame
			h.Encode(&e1)
			h2 := fresh(i)
			require.NoError(t, h2.Decode(&e1), name)
			if !reflect.DeepEqual(h, h2) {
				t.Fatalf("%s: decode(encode(h)) = %+v, want %+v", name, h2, h)
			}
			var e2 codec.Frame
			h2.Encode(&e2)
			if !reflect.DeepEqual(e1.Ext, e2.Ext) {
				t.Fatalf("%s: encoding not stable: %q vs %q", name, e1.Ext, e2.Ext)
			}
		}
	})
}
