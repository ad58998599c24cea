package header

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false, "rewrite testdata/fuzz/FuzzHeaderDecode from realistic headers")

func extText(ext []codec.KV) string {
	var b strings.Builder
	for i, kv := range ext {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(kv.Key + "=" + kv.Value)
	}
	return b.String()
}

// TestWriteFuzzSeeds writes the FuzzHeaderDecode corpus with
// -update-fuzz-seeds; otherwise it checks the corpus exists.
func TestWriteFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzHeaderDecode")
	if !*updateFuzzSeeds {
		names, err := filepath.Glob(filepath.Join(dir, "*"))
		require.NoError(t, err)
		require.NotEmpty(t, names, "run go test -run TestWriteFuzzSeeds ./codec/header -args -update-fuzz-seeds")
		return
	}
	seeds := map[string]string{
		"java_send_v2": extText(javaSendV2().Ext),
		"go_pull":      extText(goPull().Ext),
		"go_send_v1": "producerGroup=pg\ntopic=TopicTest\ndefaultTopic=TBW102\ndefaultTopicQueueNums=4\nqueueId=0\nsysFlag=0\n" +
			"bornTimestamp=1700000000000\nflag=0\nproperties=TAGS\x01TagA\x02\nreconsumeTimes=0\nunitMode=false\n" +
			"maxReconsumeTimes=0\nbatch=false\nbname=broker-a",
		"register_broker": "brokerName=broker-a\nbrokerAddr=10.0.0.1:10911\nclusterName=DefaultCluster\nhaServerAddr=10.0.0.1:10912\n" +
			"brokerId=0\nheartbeatTimeoutMillis=120000\nenableActingMaster=false\ncompressed=false\nbodyCrc32=123456789",
		"route":       "topic=TopicTest\nacceptStandardJsonOnly=TRUE",
		"offset":      "consumerGroup=cg\ntopic=TopicTest\nqueueId=-1\ncommitOffset=9223372036854775807\nsetZeroIfNotFound=false\ncommitted=",
		"end_txn":     "producerGroup=pg\ntranStateTableOffset=12\ncommitLogOffset=3456\ncommitOrRollback=8\nfromTransactionCheck=true\nmsgId=AC11\ntransactionId=\nbname=",
		"bad_numbers": "queueId=0x10\nqueueOffset=1e3\nmaxMsgNums=+32\nsysFlag=-0\ne=99999999999",
		"send_resp":   "msgId=AC11000100002A9F0000000000000000\nqueueId=3\nqueueOffset=100\ntransactionId=x\nMSG_REGION=DefaultRegion\nTRACE_ON=true",
	}
	// The extFields of every recorded golden frame.
	metas, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.json"))
	require.NoError(t, err)
	for _, m := range metas {
		src, err := os.ReadFile(m)
		require.NoError(t, err)
		var meta struct {
			Ext map[string]string `json:"ext"`
		}
		require.NoError(t, json.Unmarshal(src, &meta))
		keys := make([]string, 0, len(meta.Ext))
		for k := range meta.Ext {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ext []codec.KV
		for _, k := range keys {
			ext = append(ext, codec.KV{Key: k, Value: meta.Ext[k]})
		}
		if len(ext) > 0 {
			seeds["golden_"+strings.TrimSuffix(filepath.Base(m), ".json")] = extText(ext)
		}
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
}
