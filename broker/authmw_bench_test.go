package broker

import (
	"encoding/binary"
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// BenchmarkAuthCheckSend is the pipeline's auth middleware on a signed
// 1 KiB SEND_MESSAGE_V2 (authentication, targets, authorization), the
// per-message cost auth adds to a send: of a super user, and of a normal
// user whose ACL has 40 entries (Pub on the topic among them, the source
// checked).
func BenchmarkAuthCheckSend(b *testing.B) {
	dir := b.TempDir()
	svc, err := auth.Open(auth.Config{AuthenticationEnabled: true, AuthorizationEnabled: true,
		InitAuthenticationUser: `{"username":"root","password":"root-secret"}`}, dir, testLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	if err := svc.CreateUser(auth.User{Username: "alice", Password: "alice-secret", Type: auth.UserNormal}); err != nil {
		b.Fatal(err)
	}
	var entries []auth.Entry
	for i := range 40 {
		name := "Topic:Other" + strconv.Itoa(i)
		if i == 39 {
			name = "Topic:T"
		}
		res, ok := auth.ParseResourcePattern(name)
		if !ok {
			b.Fatal(name)
		}
		entries = append(entries, auth.Entry{Resource: res, Actions: []auth.Action{auth.ActionPub, auth.ActionSub},
			SourceIPs: []string{"127.0.0.0/8"}, Decision: auth.Allow})
	}
	if err := svc.PutACL(auth.ACL{Username: "alice", Policies: []auth.Policy{{Type: auth.PolicyCustom, Entries: entries}}}); err != nil {
		b.Fatal(err)
	}
	chk := newAuthCheck(svc, "C")
	for _, who := range [][2]string{{"root", "root-secret"}, {"alice", "alice-secret"}} {
		b.Run(who[0], func(b *testing.B) {
			req := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Body: make([]byte, 1024)}
			for _, kv := range [][2]string{{"a", "pg"}, {"b", "T"}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"}, {"f", "0"},
				{"g", "1700000000000"}, {"h", "0"}, {"i", "UNIQ_KEY\x01AC11000100002A9F00000000000000001\x02WAIT\x01true\x02"},
				{"j", "0"}, {"k", "false"}, {"m", "false"}, {"n", "broker-a"}} {
				req.Set(kv[0], kv[1])
			}
			auth.Credentials{AccessKey: who[0], SecretKey: who[1]}.Signer()(req)
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
			// CPU time, not wall time: the machine is shared, and waiting
			// for a core is not the check's cost.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is this process's user+system CPU time in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkServerSideSendAuth is the broker's whole side of pipelined
// 1 KiB SEND_MESSAGE_V2s (16 written, then their 16 replies read, over a
// raw socket), auth off and on (signed by a super user, the signature
// computed once: the client costs nothing per message). Sub-benchmarks
// alternate with -count; cpu-ns/op is the process's CPU time per message,
// nearly all of it the broker's, so on/off is auth's server-side cost.
func BenchmarkServerSideSendAuth(b *testing.B) {
	const window = 16
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			tb := startBroker(b, func(c *Config) {
				if on {
					c.AuthenticationEnabled = true
					c.AuthorizationEnabled = true
					c.InitAuthenticationUser = `{"username":"root","password":"root-secret"}`
				}
			})
			tb.topics.createIfAbsent("BenchAuth", 1, body.PermRead|body.PermWrite, 0)
			f := sendV2Request("BenchAuth", 0, props("TAGS", "TagA", "UNIQ_KEY", "0A0000010000000000000000000000AA"), make([]byte, 1024))
			if on {
				auth.Credentials{AccessKey: "root", SecretKey: "root-secret"}.Signer()(f)
			}
			one := f.AppendTo(nil)
			var wire []byte
			for range window {
				wire = append(wire, one...)
			}
			rc := dialRawClient(b, tb.addr)
			batch := func() {
				if _, err := rc.nc.Write(wire); err != nil {
					b.Fatal(err)
				}
				for range window {
					if _, err := io.ReadFull(rc.br, rc.reply[:4]); err != nil {
						b.Fatal(err)
					}
					n := int(binary.BigEndian.Uint32(rc.reply))
					if _, err := io.ReadFull(rc.br, rc.reply[:n]); err != nil {
						b.Fatal(err)
					}
					if code := replyCode(b, rc.reply[:n]); code != int(codec.RespSuccess) {
						b.Fatalf("send answered %d", code)
					}
				}
			}
			for range 50 {
				batch()
			}
			b.SetBytes(1024)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU(b)
			msgs := 0
			for msgs < b.N {
				batch()
				msgs += window
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(msgs), "cpu-ns/op")
		})
	}
}

// sendV2Request is the frame sendV2Wire encodes.
func sendV2Request(topic string, queueID int, props string, body []byte) *codec.Frame {
	f := request(codec.ReqSendMessageV2, "a", "pg", "b", topic, "c", "TBW102", "d", "4", "e", strconv.Itoa(queueID),
		"f", "0", "g", strconv.FormatInt(time.Now().UnixMilli(), 10), "h", "0", "i", props, "j", "0", "k", "false",
		"l", "16", "m", "false", "n", "broker-a")
	f.Opaque = 1
	f.Body = body
	return f
}
