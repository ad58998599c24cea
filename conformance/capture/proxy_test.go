package capture

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoServer answers every request with a response carrying the same
// opaque and code 0, on 127.0.0.1.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					raw, err := ReadFrame(c, 1<<20)
					if err != nil {
						return
					}
					f, err := ParseFrame(raw)
					if err != nil {
						return
					}
					resp := EncodeRequest(0, f.Opaque, FlagResponse, map[string]string{"msgId": "X"}, nil)
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProxyRecordsBothDirections(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir, 1, 1<<20)
	require.NoError(t, err)
	p, err := NewProxy(ProxyConfig{Listen: "127.0.0.1:0", Target: echoServer(t), ServerSource: "test server", Sink: rec})
	require.NoError(t, err)
	defer p.Close()
	p.SetClientSource("test client")

	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	for _, opaque := range []int32{5, 6} {
		_, err = c.Write(EncodeRequest(310, opaque, 0, map[string]string{"a": "T"}, []byte("hello")))
		require.NoError(t, err)
		raw, err := ReadFrame(c, 1<<20)
		require.NoError(t, err)
		f, err := ParseFrame(raw)
		require.NoError(t, err)
		require.Equal(t, opaque, f.Opaque, "proxy must forward the response unchanged")
	}
	// The sink runs after forwarding: poll for the files with a deadline.
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.Names()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.ElementsMatch(t, []string{"test-client-req-310-1", "test-server-resp-310-1"}, rec.Names(),
		"one per kind; the response is named after the request code it answers")

	raw, err := os.ReadFile(filepath.Join(dir, "test-client-req-310-1.frame"))
	require.NoError(t, err)
	f, err := ParseFrame(raw)
	require.NoError(t, err)
	require.Equal(t, "hello", string(f.Body))

	js, err := os.ReadFile(filepath.Join(dir, "test-server-resp-310-1.json"))
	require.NoError(t, err)
	var fx Fixture
	require.NoError(t, json.Unmarshal(js, &fx))
	require.Equal(t, Fixture{Source: "test server", RequestCode: 310, Code: 0, Flag: FlagResponse, Opaque: 5,
		Language: "JAVA", Version: 479, Serialize: "JSON", Ext: map[string]string{"msgId": "X"}, BodyLen: 0}, fx)
	require.NoError(t, rec.Err())
}

func TestSlug(t *testing.T) {
	require.Equal(t, "java-5.3-broker", Slug("java-5.3 broker"))
	require.Equal(t, "go-client", Slug("go client"))
}
