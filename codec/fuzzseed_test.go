package codec

import (
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false, "rewrite testdata/fuzz seed corpora from realistic frames")

// realisticFrames returns whole frames (length prefix included) as the
// official clients and brokers write them (protocol reference §1.2–§1.4,
// §3), plus any recorded golden fixtures.
func realisticFrames(t *testing.T) map[string][]byte {
	frames := map[string][]byte{}
	jsonFrame := func(hdr, body string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(4+len(hdr)+len(body))), wrapHeader(SerializeJSON, []byte(hdr), []byte(body))...)
	}
	// Go client, GET_ROUTEINFO_BY_TOPIC (byte-exact example of §1.2).
	frames["go_route"] = jsonFrame(`{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"T"}}`, "")
	// Go client, HEART_BEAT in ROCKETMQ form with body "x" (§1.4).
	rmq, err := hex.DecodeString("000000220100001d002209013d000000020000000000000000000000080001" + "6b0000000176" + "78")
	require.NoError(t, err)
	frames["go_heartbeat_rmq"] = rmq
	// Java request/response headers (§1.3).
	frames["java_route"] = jsonFrame(`{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":475}`, "")
	frames["java_resp"] = jsonFrame(`{"code":0,"flag":1,"language":"JAVA","opaque":7,"remark":"ok","serializeTypeCurrentRPC":"JSON","version":0}`, "")
	frames["java_not_supported"] = jsonFrame(`{"code":3,"flag":1,"language":"JAVA","opaque":9,"remark":" request type 9999 not supported","serializeTypeCurrentRPC":"JSON","version":479}`, "")
	// Java SEND_MESSAGE_V2 with a body, in both serializations.
	send := &Frame{Code: 310, Language: LangJava, Version: 479, Opaque: 42, Ext: []KV{
		{"a", "please_rename_unique_group_name"}, {"b", "TopicTest"}, {"c", "TBW102"}, {"d", "4"},
		{"e", "1"}, {"f", "0"}, {"g", "1700000000123"}, {"h", "0"},
		{"i", "UNIQ_KEY\x01AC110001A1B218B4AAC2000000000000\x02WAIT\x01true\x02TAGS\x01TagA\x02"},
		{"j", "0"}, {"k", "false"}, {"m", "false"}, {"n", "broker-a"}, {"bname", "broker-a"},
	}, Body: []byte("Hello RocketMQ 0")}
	frames["java_send_v2"] = send.AppendTo(nil)
	send.Serialize = SerializeRocketMQ
	frames["java_send_v2_rmq"] = send.AppendTo(nil)
	// Go client PULL_MESSAGE: every key, empty strings for unset ones.
	pull := &Frame{Code: 11, Language: LangGo, Version: 317, Opaque: 3, Ext: []KV{
		{"consumerGroup", "testGroup"}, {"topic", "TopicTest"}, {"queueId", "0"}, {"queueOffset", "0"},
		{"maxMsgNums", "32"}, {"sysFlag", "2"}, {"commitOffset", "0"}, {"suspendTimeoutMillis", "20000"},
		{"subscription", ""}, {"subVersion", "0"}, {"expressionType", "TAG"}, {"bname", ""},
	}}
	frames["go_pull"] = pull.AppendTo(nil)
	resp := NewResponse(pull, 19, "OFFSET_OVERFLOW_ONE")
	resp.Ext = []KV{{"suggestWhichBrokerId", "0"}, {"nextBeginOffset", "0"}, {"minOffset", "0"}, {"maxOffset", "0"}}
	frames["pull_not_found"] = resp.AppendTo(nil)
	// Escapes, non-ASCII and a oneway flag.
	odd := &Frame{Code: 15, Language: LangJava, Version: 409, Opaque: -5, Flag: FlagOneway,
		Remark: "héllo \"q\" \\ \n\t\x01", Ext: []KV{{"k\"ey", "v\u00e9\u4e2d"}, {"", ""}}}
	frames["oneway_escapes"] = odd.AppendTo(nil)
	odd.Serialize = SerializeRocketMQ
	frames["oneway_escapes_rmq"] = odd.AppendTo(nil)

	dir := filepath.Join("testdata", "golden")
	names, _ := filepath.Glob(filepath.Join(dir, "*.frame"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		frames["golden_"+strings.TrimSuffix(filepath.Base(n), ".frame")] = b
	}
	return frames
}

func writeSeed(t *testing.T, target, name string, args ...[]byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		fmt.Fprintf(&b, "[]byte(%q)\n", a)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644))
}

// TestWriteFuzzSeeds rewrites the seed corpora with -update-fuzz-seeds;
// otherwise it checks that every target has seeds on disk.
func TestWriteFuzzSeeds(t *testing.T) {
	targets := []string{"FuzzDecodeFrame", "FuzzJSONHeader", "FuzzRocketMQHeader"}
	if !*updateFuzzSeeds {
		for _, tg := range targets {
			names, err := filepath.Glob(filepath.Join("testdata", "fuzz", tg, "*"))
			require.NoError(t, err)
			require.NotEmpty(t, names, "no seeds for %s: run go test -run TestWriteFuzzSeeds -update-fuzz-seeds ./codec", tg)
		}
		return
	}
	frames := realisticFrames(t)
	names := make([]string, 0, len(frames))
	for name := range frames {
		names = append(names, name)
	}
	sort.Strings(names)
	var all []byte
	for _, name := range names {
		fr := frames[name]
		writeSeed(t, "FuzzDecodeFrame", name, fr, []byte{3, 0, 17})
		if len(all)+len(fr) <= 8<<10 { // keep the stream seed small enough to mutate
			all = append(all, fr...)
		}
		var f Frame
		require.NoError(t, decodeCopy(fr[4:], &f), name)
		hl := int(binary.BigEndian.Uint32(fr[4:]) & 0xFFFFFF)
		hdr := fr[8 : 8+hl]
		if f.Serialize == SerializeJSON {
			writeSeed(t, "FuzzJSONHeader", name, hdr)
		} else {
			writeSeed(t, "FuzzRocketMQHeader", name, hdr, fr[8+hl:])
		}
	}
	writeSeed(t, "FuzzDecodeFrame", "stream_all", all, []byte{0, 1, 200, 63})
	writeSeed(t, "FuzzDecodeFrame", "too_large", []byte{0x7f, 0, 0, 0, 0, 0, 0, 0}, nil)
	writeSeed(t, "FuzzDecodeFrame", "too_short", []byte{0, 0, 0, 2, 0, 0}, nil)
	writeSeed(t, "FuzzDecodeFrame", "bad_serialize", []byte{0, 0, 0, 4, 2, 0, 0, 0}, nil)
	writeSeed(t, "FuzzJSONHeader", "language_ordinal", []byte(`{"code":"34","language":9,"opaque":1,"flag":0,"remark":null,"extFields":{"n":12,"b":true,"z":null,"s":"\ud83d\ude00\u00e9"},"x":[1,{"y":[]}]}`))
}
