package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedUpToDate is `-check` inside go test: every generated file
// must equal what the spec renders now.
func TestGeneratedUpToDate(t *testing.T) {
	root, err := repoRoot()
	require.NoError(t, err)
	outs, err := generate(root)
	require.NoError(t, err)
	require.Greater(t, len(outs), 3)
	for _, o := range outs {
		have, err := os.ReadFile(filepath.Join(root, o.path))
		require.NoError(t, err, o.path)
		require.Equal(t, string(o.src), string(have), "%s is stale: run go run ./codec/internal/gen", o.path)
	}
}

func TestCheckDetectsStale(t *testing.T) {
	root := t.TempDir()
	spec := filepath.Join(root, "codec", "internal", "spec")
	require.NoError(t, os.MkdirAll(spec, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+module+"\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(spec, "codes.def"), []byte("request SEND_MESSAGE 10\nresponse SUCCESS 0\n"), 0o644))
	t.Chdir(filepath.Join(root, "codec"))

	require.Error(t, run(true), "nothing generated yet")
	require.NoError(t, run(false))
	require.NoError(t, run(true))
	src, err := os.ReadFile(filepath.Join(root, "codec", "codes_gen.go"))
	require.NoError(t, err)
	require.Contains(t, string(src), "ReqSendMessage RequestCode = 10")

	require.NoError(t, os.WriteFile(filepath.Join(spec, "codes.def"), []byte("request SEND_MESSAGE 10\nrequest PULL_MESSAGE 11\nresponse SUCCESS 0\n"), 0o644))
	err = run(true)
	require.Error(t, err)
	require.Contains(t, err.Error(), "codec/codes_gen.go")
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"SEND_MESSAGE_V2":          "SendMessageV2",
		"GET_ROUTEINFO_BY_TOPIC":   "GetRouteinfoByTopic",
		"SUCCESS":                  "Success",
		"TRANSACTION_STATE_UNKNOW": "TransactionStateUnknow",
	} {
		require.Equal(t, want, camel(in))
	}
	require.Equal(t, "QueueID", goFieldName("queueId"))
	require.Equal(t, "ClientID", goFieldName("clientID"))
	require.Equal(t, "ReviveQid", goFieldName("reviveQid"))
}

func TestParseCodesErrors(t *testing.T) {
	for src, msg := range map[string]string{
		"request A 1\nrequest A 2\n": "already declared",
		"request A 1\nrequest B 1\n": "already named",
		"response A 1 alias\n":       "no primary",
		"request A x\n":              "value",
		"reply A 1\n":                "unknown kind",
		"request A 1 primary\n":      "unknown modifier",
		"request A 99999999999\n":    "value",
	} {
		_, err := parseCodes(src)
		require.Error(t, err, src)
		require.Contains(t, err.Error(), msg, src)
	}
	codes, err := parseCodes("# c\nrequest A_B 1 # note\nresponse X 2\nresponse Y 2 alias\n")
	require.NoError(t, err)
	require.Len(t, codes, 3)
	require.Equal(t, "note", codes[0].note)
	require.True(t, codes[2].alias)
}

func TestParseHeadersErrors(t *testing.T) {
	for src, msg := range map[string]string{
		"header A java=A\n":                                  "before any `file`",
		"file x\nheader A\n":                                 "java=",
		"file x\nheader A java=A\n  k float\n":               "unknown type",
		"file x\nheader A java=A\n  k string\n  k int32\n":   "duplicate field",
		"file x\nheader A java=A use=nope\n  k string\n":     "unknown mixin",
		"file x\nheader A java=A\n  k int32 req default=1\n": "required field has no default",
		"file x\nheader A java=A v1=B\n  k int32\n":          "unknown v1 header",
		"file x\nheader A java=A\nheader A java=A\n":         "declared twice",
		"  k string\n": "outside a header",
		"file x\nheader A java=A\n  k int32 default=z\n": "bad int32 default",
	} {
		_, err := parseHeaders(src)
		require.Error(t, err, src)
		require.Contains(t, err.Error(), msg, src)
	}
}

func TestParseHeaders(t *testing.T) {
	src := `
mixin base
  bname string
file send
# Doc line.
header V1 java=V1Header
  producerGroup string req
  queueId int32 default=-1
  use base
header V2 java=V2Header v1=V1 use=base
  a=ProducerGroup string req
  e=QueueID int32
  n=BrokerName string v1=Bname
`
	files, err := parseHeaders(src)
	require.NoError(t, err)
	require.Len(t, files, 1)
	hs := files[0].headers
	require.Len(t, hs, 2)
	require.Equal(t, []string{"Doc line."}, hs[0].doc)
	require.Equal(t, "QueueID", hs[0].fields[1].goName)
	require.Equal(t, "-1", hs[0].fields[1].def)
	require.Equal(t, "bname", hs[0].fields[2].key)
	pairs, err := v1Pairs(hs[1], hs[0])
	require.NoError(t, err)
	var got []string
	for _, p := range pairs {
		got = append(got, p[0].key+"->"+p[1].key)
	}
	// V2's inherited bname has no V1 partner: n feeds V1's Bname.
	require.Equal(t, "a->producerGroup e->queueId n->bname", strings.Join(got, " "))
}
