package namesrv

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"github.com/rocketgo/rocketgo/codec/transport/transporttest"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// bomb16 is the 16-byte compressed REGISTER_BROKER body: a zlib
// stream whose first chunk announces 256 MiB−8 bytes and then ends.
func bomb16(t *testing.T) []byte {
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(binary.BigEndian.AppendUint32(nil, 256<<20-8))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.LessOrEqual(t, buf.Len(), 16)
	return buf.Bytes()
}

// TestRegisterBombOverTheWire: 12 anonymous connections sending the 16-byte
// bomb 3 times each (the old decoder allocated 256 MiB per request; 28 of
// them killed a name server capped at 3 GiB) get SYSTEM_ERROR with Java's
// remark, the server allocates a few MiB in all, and keeps serving.
func TestRegisterBombOverTheWire(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	good := newClient(t)
	m, _ := masterSlave()
	m.register(t, good, s.Addr())

	f := m.registerFrame(t)
	f.Set("compressed", "true")
	f.Body = bomb16(t)
	frame := f.AppendTo(nil)

	const conns, perConn = 12, 3
	ncs := make([]net.Conn, conns)
	for i := range ncs {
		ncs[i] = rawConn(t, s.Addr())
	}
	w := transporttest.WatchHeap(t, 512<<20, nil)
	defer w.Stop()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perConn {
				if w.Tripped() {
					return
				}
				if _, err := ncs[i].Write(frame); err != nil {
					t.Errorf("write: %v", err)
					return
				}
				resp, err := readFrameErr(ncs[i])
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				if resp.Code != int32(codec.RespSystemError) || resp.Remark != "Failed to decode RegisterBrokerBody" {
					t.Errorf("answer %d %q", resp.Code, resp.Remark)
				}
			}
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bombs: %d KiB allocated in all", conns*perConn, got>>10)
	require.Less(t, got, uint64(16<<20))
	r := decodeRoute(t, getRoute(t, good, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, "broker-a", r.BrokerDatas[0].BrokerName)
}

// readFrameErr is readFrame for goroutines that may not call FailNow.
func readFrameErr(nc net.Conn) (*codec.Frame, error) {
	var l [4]byte
	if _, err := io.ReadFull(nc, l[:]); err != nil {
		return nil, err
	}
	payload := make([]byte, binary.BigEndian.Uint32(l[:]))
	if _, err := io.ReadFull(nc, payload); err != nil {
		return nil, err
	}
	var f codec.Frame
	if err := codec.Decode(payload, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// TestUpdateNamesrvConfigRefusesDangerousKeys: every path key, the listen
// address and configBlackList itself are refused over the wire with Java's
// code and remark, alone or next to an allowed key, and neither the live
// configuration nor the config file changes; an allowed key still updates.
func TestUpdateNamesrvConfigRefusesDangerousKeys(t *testing.T) {
	cfg := testConfig(t)
	require.NoError(t, os.WriteFile(cfg.ConfigStorePath, []byte("orderMessageEnable=false\n"), 0o644))
	s := startNamesrv(t, cfg)
	c := newClient(t)
	fileBefore, err := os.ReadFile(cfg.ConfigStorePath)
	require.NoError(t, err)
	cfgBefore := s.Config()

	for _, body := range []string{
		"kvConfigPath=/tmp/evil\n",
		"configStorePath=/etc/cron.d/x\n",
		"rocketmqHome=/tmp/evil\n",
		"configBlackList=\n",
		"bindAddress=0.0.0.0\n",
		"someNewDir=/tmp\n",
		"orderMessageEnable=true\nconfigStorePath=/tmp/evil\n", // one refused key refuses all
		"kvConfig\\u0050ath=/tmp/evil\n",                       // an escaped key is the same key
	} {
		u := request(codec.ReqUpdateNamesrvConfig)
		u.Body = []byte(body)
		resp := invoke(t, c, s.Addr(), u)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, cfgBefore, s.Config(), body)
		fileNow, err := os.ReadFile(cfg.ConfigStorePath)
		require.NoError(t, err)
		require.Equal(t, string(fileBefore), string(fileNow), body)
	}

	u := request(codec.ReqUpdateNamesrvConfig)
	u.Body = []byte("orderMessageEnable=true\n")
	require.Equal(t, int32(codec.RespSuccess), invoke(t, c, s.Addr(), u).Code)
	require.True(t, s.Config().OrderMessageEnable)
	stored, err := readFile(cfg.ConfigStorePath)
	require.NoError(t, err)
	require.Contains(t, stored, "orderMessageEnable=true\n")
}

// TestUpdateNamesrvConfigNewlineDoesNotAddKeys: an allowed value holding a
// newline is persisted escaped, so the file read at the next start has the
// same value and no extra key (Java's plain writer would turn it into
// kvConfigPath=/tmp/evil, past the black list).
func TestUpdateNamesrvConfigNewlineDoesNotAddKeys(t *testing.T) {
	cfg := testConfig(t)
	s := startNamesrv(t, cfg)
	c := newClient(t)
	u := request(codec.ReqUpdateNamesrvConfig)
	u.Body = []byte(`productEnvName=x\nkvConfigPath=/tmp/evil` + "\n")
	require.Equal(t, int32(codec.RespSuccess), invoke(t, c, s.Addr(), u).Code)
	require.Equal(t, "x\nkvConfigPath=/tmp/evil", s.Config().ProductEnvName)

	data, err := os.ReadFile(cfg.ConfigStorePath)
	require.NoError(t, err)
	p, err := javaprops.Parse(data)
	require.NoError(t, err)
	reloaded := Default()
	_, err = reloaded.Apply(p)
	require.NoError(t, err)
	require.Equal(t, cfg.KVConfigPath, reloaded.KVConfigPath)
	require.Equal(t, "x\nkvConfigPath=/tmp/evil", reloaded.ProductEnvName)
}
