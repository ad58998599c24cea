package broker

import (
	"syscall"
	"testing"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
)

// BenchmarkAuthCheckSend is the pipeline's auth middleware on a signed
// 1 KiB SEND_MESSAGE_V2 of a super user (authentication, targets,
// authorization), the per-message cost auth adds to a send.
func BenchmarkAuthCheckSend(b *testing.B) {
	dir := b.TempDir()
	svc, err := auth.Open(auth.Config{AuthenticationEnabled: true, AuthorizationEnabled: true,
		InitAuthenticationUser: `{"username":"root","password":"root-secret"}`}, dir, testLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	chk := newAuthCheck(svc, "C")
	req := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Body: make([]byte, 1024)}
	for _, kv := range [][2]string{{"a", "pg"}, {"b", "T"}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"}, {"f", "0"},
		{"g", "1700000000000"}, {"h", "0"}, {"i", "UNIQ_KEY\x01AC11000100002A9F00000000000000001\x02WAIT\x01true\x02"},
		{"j", "0"}, {"k", "false"}, {"m", "false"}, {"n", "broker-a"}} {
		req.Set(kv[0], kv[1])
	}
	auth.Credentials{AccessKey: "root", SecretKey: "root-secret"}.Signer()(req)
	if r := chk.checkFrom("127.0.0.1:50000", req); r != nil {
		b.Fatalf("refused: %s", r.Remark)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(req.Body)))
	b.ResetTimer()
	cpu0 := processCPU(b)
	for range b.N {
		if chk.checkFrom("127.0.0.1:50000", req) != nil {
			b.Fatal("refused")
		}
	}
	// CPU time, not wall time: the machine is shared, and waiting for a
	// core is not the check's cost.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is this process's user+system CPU time in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
