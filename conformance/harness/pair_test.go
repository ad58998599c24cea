package harness

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFastjsonIntKeys(t *testing.T) {
	in := `{"brokerAddrs":{0:"127.0.0.1:1",1:"a:2"},"s":"{0:\"x\"}","n":[1,2]}`
	require.Equal(t, `{"brokerAddrs":{"0":"127.0.0.1:1","1":"a:2"},"s":"{0:\"x\"}","n":[1,2]}`, string(fastjsonIntKeys([]byte(in))))
}

// TestPairStarts starts each pair kind named in CONFORMANCE_PAIR_SMOKE (a
// comma list; unset: skipped — the replication suite starts pairs itself)
// and checks the slave replicates the master's commit log.
func TestPairStarts(t *testing.T) {
	kinds := os.Getenv("CONFORMANCE_PAIR_SMOKE")
	if kinds == "" {
		t.Skip("set CONFORMANCE_PAIR_SMOKE=pair-ours,pair-java,...")
	}
	env, err := FindEnv()
	require.NoError(t, err)
	for _, k := range splitList(kinds) {
		t.Run(k, func(t *testing.T) {
			ctx := context.Background()
			p, err := StartPair(ctx, env, PairKind(k), PairOptions{Dir: t.TempDir()})
			require.NoError(t, err)
			defer p.Close()
			require.NoError(t, p.Master.CreateTopicOn(ctx, "PairSmoke", 2))
			for i := range 10 {
				code, remark, err := p.Master.Send(ctx, "PairSmoke", i%2, "k", []byte("hello"))
				require.NoError(t, err)
				require.Zero(t, code, remark)
			}
			off, err := p.WaitCaughtUp(ctx, 60*time.Second)
			require.NoError(t, err)
			require.Positive(t, off)
			t.Logf("%s: slave caught up at %d", k, off)
		})
	}
}
