package fastjson

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type mqOffset struct {
	topic, broker string
	qid           int32
	off           int64
}

// readOffsetTable reads {"offsetTable":{<mq>:<long>,…}} in any key form.
func readOffsetTable(t *testing.T, body string) []mqOffset {
	var out []mqOffset
	r := NewReader([]byte(body))
	for r.ObjectStart(); r.More(); {
		if r.Key() != "offsetTable" {
			r.Skip()
			continue
		}
		for r.ObjectStart(); r.More(); {
			k := r.Key()
			topic, broker, qid, err := ParseMessageQueue(k)
			require.NoError(t, err)
			out = append(out, mqOffset{topic, broker, qid, r.Int()})
		}
	}
	require.NoError(t, r.End())
	return out
}

func TestReaderMessageQueueKeys(t *testing.T) {
	want := []mqOffset{{"TopicTest", "broker-a", 0, 5}, {"TopicTest", "broker-a", 1, 7}}
	// What the Java client sends (fastjson object keys).
	require.Equal(t, want, readOffsetTable(t, `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:5,{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}:7}}`))
	// BrowserCompatible form: the key is a string holding the JSON.
	require.Equal(t, want, readOffsetTable(t, `{"offsetTable":{"{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"TopicTest\"}":5, "{\"topic\":\"TopicTest\",\"brokerName\":\"broker-a\",\"queueId\":1}" : "7"}}`))
}

func TestReaderRouteBareKeys(t *testing.T) {
	body := `{"brokerDatas":[{"brokerAddrs":{0:"192.168.0.1:10911",1:"192.168.0.2:10911"},"brokerName":"broker-a","cluster":"c"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6}]}`
	r := NewReader([]byte(body))
	addrs := map[string]string{}
	var perm int64
	for r.ObjectStart(); r.More(); {
		switch r.Key() {
		case "brokerDatas":
			for r.ArrayStart(); r.More(); {
				for r.ObjectStart(); r.More(); {
					if r.Key() == "brokerAddrs" {
						for r.ObjectStart(); r.More(); {
							k := r.Key()
							addrs[k] = r.String()
						}
					} else {
						r.Skip()
					}
				}
			}
		case "queueDatas":
			for r.ArrayStart(); r.More(); {
				for r.ObjectStart(); r.More(); {
					if r.Key() == "perm" {
						perm = r.Int()
					} else {
						r.Skip()
					}
				}
			}
		default:
			r.Skip()
		}
	}
	require.NoError(t, r.End())
	require.Equal(t, map[string]string{"0": "192.168.0.1:10911", "1": "192.168.0.2:10911"}, addrs)
	require.Equal(t, int64(6), perm)
}

func TestReaderLenientScalars(t *testing.T) {
	r := NewReader([]byte(` { 'a' : 'it\'s' , b: "x\u00e9\uD83D\uDE00\n\/" , "n": null, "i": "42", "f": 1.5, "t": true, "s": 12, "l": 3L, "o": null, "arr": null, "bs": "true", "neg": -7 } `))
	got := map[string]any{}
	for r.ObjectStart(); r.More(); {
		switch k := r.Key(); k {
		case "a", "b", "n", "s":
			got[k] = r.String()
		case "i", "l", "neg":
			got[k] = r.Int()
		case "f":
			got[k] = r.Float()
		case "t", "bs":
			got[k] = r.Bool()
		case "o":
			n := 0
			for r.ObjectStart(); r.More(); {
				r.Key()
				r.Skip()
				n++
			}
			got[k] = n
		case "arr":
			n := 0
			for r.ArrayStart(); r.More(); {
				r.Skip()
				n++
			}
			got[k] = n
		}
	}
	require.NoError(t, r.End())
	require.Equal(t, map[string]any{
		"a": "it's", "b": "xé😀\n/", "n": "", "s": "12", "i": int64(42), "l": int64(3), "neg": int64(-7),
		"f": 1.5, "t": true, "bs": true, "o": 0, "arr": 0,
	}, got)
}

func TestReaderErrors(t *testing.T) {
	bad := []string{
		``, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,}x`, `{"a" 1}`, `[1 2]`, `"abc`, `{"a":"\u12"}`,
		`{"a":tru}`, `{"a":1}}`, `{:1}`,
	}
	for _, s := range bad {
		r := NewReader([]byte(s))
		r.Skip()
		require.Error(t, r.End(), "%q", s)
	}
	deep := make([]byte, 0, 200)
	for range 100 {
		deep = append(deep, '[')
	}
	r := NewReader(deep)
	r.Skip()
	require.ErrorIs(t, r.End(), ErrSyntax)
}

func TestReaderRaw(t *testing.T) {
	r := NewReader([]byte(`{"a":{"x":[1,2]},"b":2}`))
	var raw string
	for r.ObjectStart(); r.More(); {
		if r.Key() == "a" {
			raw = string(r.Raw())
		} else {
			r.Skip()
		}
	}
	require.NoError(t, r.End())
	require.Equal(t, `{"x":[1,2]}`, raw)
}

func TestWriteReadStringRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"\\/", "\x00\x01\x1f\x7f\u0085", "中文😀", "\u2028x\u2029", "\t\n"} {
		for _, browser := range []bool{false, true} {
			w := Writer{Browser: browser}
			w.ArrayStart()
			w.String(s)
			w.ArrayEnd()
			r := NewReader(w.Bytes())
			var got []string
			for r.ArrayStart(); r.More(); {
				got = append(got, r.String())
			}
			require.NoError(t, r.End())
			require.Equal(t, []string{s}, got, "browser=%v", browser)
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"t"}:5}}`,
		`{"a":[1,2,{"b":null}],'c':'d',e:1.5e3,0:"x"}`,
		`{"x":"\uD83D\uDE00\u12"}`, `[[[[`, `"\`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		r.Skip()
		err := r.End()
		// Re-walk with typed accessors: none may panic either.
		r.Reset(b)
		for r.ObjectStart(); r.More(); {
			k := r.Key()
			switch len(k) % 5 {
			case 0:
				_ = r.String()
			case 1:
				r.Int()
			case 2:
				r.Bool()
			case 3:
				r.Float()
			default:
				r.Raw()
			}
		}
		if err == nil && len(b) > 0 && b[0] == '{' {
			// A document Skip accepted must also walk cleanly as an object
			// when its scalars are read as raw text.
			r.Reset(b)
			for r.ObjectStart(); r.More(); {
				r.Key()
				r.Raw()
			}
			require.NoError(t, r.End())
		}
	})
}

// ResetAlias returns the same values as Reset; unescaped strings and keys
// point into the document, escaped ones are still decoded copies.
func TestReaderAlias(t *testing.T) {
	doc := []byte(`{"a":"plain","b":"esc\\aped",c:12,"d":null}`)
	read := func(r *Reader) map[string]string {
		out := map[string]string{}
		for r.ObjectStart(); r.More(); {
			k := r.Key()
			out[k] = r.String()
		}
		require.NoError(t, r.End())
		return out
	}
	var copied, aliased Reader
	copied.Reset(doc)
	aliased.ResetAlias(doc)
	want := read(&copied)
	require.Equal(t, map[string]string{"a": "plain", "b": `esc\aped`, "c": "12", "d": ""}, want)
	require.Equal(t, want, read(&aliased))

	aliased.ResetAlias(doc)
	aliased.ObjectStart()
	require.True(t, aliased.More())
	require.Equal(t, "a", aliased.Key())
	v := aliased.String()
	doc[6] = 'P' // the document changes under an aliased string
	require.Equal(t, "Plain", v)
}
