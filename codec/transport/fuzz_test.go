package transport

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// FuzzServerStream throws arbitrary byte streams at a live server: it must
// neither crash nor stop serving other connections, and must answer or
// close every connection. Seeds run in every go test.
func FuzzServerStream(f *testing.F) {
	valid := request(codeEcho, 1)
	valid.Set("id", "1")
	valid.Body = []byte("x")
	one := valid.AppendTo(nil)
	rmq := *valid
	rmq.Serialize = codec.SerializeRocketMQ
	f.Add(one)
	f.Add(append(append([]byte{}, one...), one...))
	f.Add(one[:len(one)-1])
	f.Add(rmq.AppendTo(nil))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add(binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF))
	f.Add(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 4), 0))
	f.Add(append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 6), 2), '{', '}'))
	f.Add(append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 30), 1<<24|26), make([]byte, 26)...))
	// The bounded paths: a header decoded off the loop (> 64 KiB), one
	// over MaxHeaderLength announced by its first 8 bytes, a frame over
	// 64 KiB read straight into its lease, followed by a small one.
	f.Add(append(bigHeaderFrame(3, 9000), one...))
	f.Add(bigHeaderFrame(4, 140000)[:8])
	large := *valid
	large.Body = make([]byte, 100<<10)
	f.Add(append(large.AppendTo(nil), one...))

	pool := NewPool("fuzz", 2, 64)
	r := NewRouter()
	r.Handle(codeEcho, pool, echo)
	r.Handle(codeOther, nil, func(*Conn, *codec.Frame) *codec.Frame { panic("fuzz") })
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	if err := s.Start(); err != nil {
		f.Fatal(err)
	}
	var once sync.Once
	f.Cleanup(func() {
		once.Do(func() {
			_ = s.Close()
			pool.Close()
		})
	})

	f.Fuzz(func(t *testing.T, data []byte) {
		nc, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write(data); err != nil {
			return // the server may already have cut us off
		}
		_ = nc.(*net.TCPConn).CloseWrite()
		// The server answers what it can and then closes: reading ends in
		// EOF or a reset, never a timeout.
		if _, err := io.Copy(io.Discard, nc); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("server neither answered nor closed: %v", err)
			}
		}
		// Still serving.
		rc := dialRaw(t, s.Addr())
		rc.send(request(codeEcho, 99))
		if resp := rc.recv(); resp.Opaque != 99 {
			t.Fatalf("opaque %d", resp.Opaque)
		}
	})
}
