package javaprops

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseJavaForms(t *testing.T) {
	in := "# comment\n" +
		"! bang comment \\\n" +
		"listenPort=9876\n" +
		"  kvConfigPath : /tmp/kv.json\r\n" +
		"rocketmqHome /opt/rocketmq\r" +
		"\n" +
		"multi = first, \\\n" +
		"        second, \\\n" +
		"        third\n" +
		"esc\\ key\\=x=tab\\there\\nnl \\u4E2D\\uD83D\\uDE00\n" +
		"empty=\n" +
		"novalue\n" +
		"trailing=keep  \n" +
		"even=ends\\\\\n" +
		"next=1\n" +
		"listenPort=9877\n" +
		"colon:a=b\n"
	p, err := Parse([]byte(in))
	require.NoError(t, err)
	require.Equal(t, Props{
		{"listenPort", "9877"},
		{"kvConfigPath", "/tmp/kv.json"},
		{"rocketmqHome", "/opt/rocketmq"},
		{"multi", "first, second, third"},
		{"esc key=x", "tab\there\nnl 中😀"},
		{"empty", ""},
		{"novalue", ""},
		{"trailing", "keep  "},
		{"even", "ends\\"},
		{"next", "1"},
		{"colon", "a=b"},
	}, p)
	v, ok := p.Get("rocketmqHome")
	require.True(t, ok)
	require.Equal(t, "/opt/rocketmq", v)
}

func TestParseMalformedUnicode(t *testing.T) {
	_, err := Parse([]byte("a=\\u12"))
	require.Error(t, err)
	_, err = Parse([]byte("a=\\u12zz"))
	require.Error(t, err)
}

func TestAppendRoundTrip(t *testing.T) {
	p := Props{{"k", "v"}, {"sp ace", " lead"}, {"a=b:c", "x#y!z\\"}, {"nl", "1\n2\r\t\f\x01"}, {"u", "中"}}
	out := Append(nil, p)
	back, err := Parse(out)
	require.NoError(t, err)
	require.Equal(t, p, back)
	require.Equal(t, "k=v\nu=中\n", string(AppendPlain(nil, Props{{"k", "v"}, {"u", "中"}})))
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("a=b\nc d\\\n e\n#x\n\\u0041=\\u00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		back, err := Parse(Append(nil, p))
		require.NoError(t, err)
		require.Equal(t, len(p), len(back))
	})
}
