package autoswitch

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store"
)

// The Java 5.3.3 master's capture (testdata/README.md) decodes, and every
// frame re-encodes to the same bytes; our slave's capture too.
func TestJavaMasterCapture(t *testing.T) {
	b, err := os.ReadFile("testdata/java533-master-to-slave.bin")
	require.NoError(t, err)
	r := NewMasterReader(bytes.NewReader(b), 4<<20)
	h, es, _, err := r.Next(Handshake)
	require.NoError(t, err)
	require.Equal(t, []EpochEntry{{1, 0}, {5, 21560}}, es)
	require.Equal(t, int64(43120), h.Offset)
	require.Equal(t, int32(5), h.Epoch)
	pos := MasterHandshakeHeader + len(es)*EpochEntrySize
	require.Equal(t, b[:pos], AppendMasterHandshake(nil, h.Offset, h.Epoch, es))

	next, beats := int64(0), 0
	var frames []MasterHeader
	for {
		h, _, body, err := r.Next(Transfer)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		out := append(AppendTransferHeader(nil, h), body...)
		require.Equal(t, b[pos:pos+len(out)], out, "frame at %d", h.Offset)
		pos += len(out)
		require.Equal(t, next, h.Offset)
		next += int64(len(body))
		require.Equal(t, int64(43120), h.ConfirmOffset)
		if len(body) == 0 {
			beats++
		} else {
			frames = append(frames, h)
		}
	}
	require.Equal(t, len(b), pos)
	require.Equal(t, int64(43120), next)
	require.Positive(t, beats)
	// compat: the frame cut at epoch 1's end carries epoch 5.
	require.Equal(t, []MasterHeader{
		{State: Transfer, BodySize: 21560, Offset: 0, Epoch: 5, EpochStartOffset: 21560, ConfirmOffset: 43120},
		{State: Transfer, BodySize: 21560, Offset: 21560, Epoch: 5, EpochStartOffset: 21560, ConfirmOffset: 43120},
	}, frames)

	s, err := os.ReadFile("testdata/go-slave-to-java533-master.bin")
	require.NoError(t, err)
	sr := NewSlaveReader(bytes.NewReader(s))
	var m SlaveMsg
	require.NoError(t, sr.Next(&m))
	require.Equal(t, SlaveHandshake{BrokerID: 2}, m.Handshake)
	out := AppendSlaveHandshake(nil, m.Handshake)
	for {
		if err := sr.Next(&m); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, Transfer, m.State)
		out = AppendSlaveReport(out, m.Offset)
	}
	require.Equal(t, s, out)
}

// The Java 5.3.3 slave's stream to our Server (testdata/README.md)
// decodes and re-encodes to the same bytes; so does our Server's.
func TestJavaSlaveCapture(t *testing.T) {
	s, err := os.ReadFile("testdata/java533-slave-to-go-master.bin")
	require.NoError(t, err)
	sr := NewSlaveReader(bytes.NewReader(s))
	var m SlaveMsg
	require.NoError(t, sr.Next(&m))
	require.Equal(t, SlaveMsg{State: Handshake, Handshake: SlaveHandshake{BrokerID: 2}}, m)
	out := AppendSlaveHandshake(nil, m.Handshake)
	var reports []int64
	for {
		if err := sr.Next(&m); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		reports = append(reports, m.Offset)
		out = AppendSlaveReport(out, m.Offset)
	}
	require.Equal(t, s, out)
	require.Equal(t, []int64{43120, 75888, 108656, 137865}, reports)

	b, err := os.ReadFile("testdata/go-master-to-java533-slave.bin")
	require.NoError(t, err)
	r := NewMasterReader(bytes.NewReader(b), 4<<20)
	h, es, _, err := r.Next(Handshake)
	require.NoError(t, err)
	require.Equal(t, []EpochEntry{{1, 0}, {5, 21560}, {6, 43120}}, es)
	require.Equal(t, MasterHeader{State: Handshake, BodySize: 36, Offset: 137865, Epoch: 6}, h)
	next := int64(43120)
	for {
		h, _, body, err := r.Next(Transfer)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Equal(t, MasterHeader{State: Transfer, BodySize: int32(len(body)), Offset: next, Epoch: 6, EpochStartOffset: 43120, ConfirmOffset: 137865}, h)
		next += int64(len(body))
	}
	require.Equal(t, int64(137865), next)
}

// The Java master's stream, replayed to a Client, gives the replica the
// Java master replicated live: its records, and the master's epoch file.
func TestJavaMasterCaptureReplay(t *testing.T) {
	b, err := os.ReadFile("testdata/java533-master-to-slave.bin")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var m SlaveMsg
		if NewSlaveReader(bufio.NewReader(c)).Next(&m) != nil {
			return
		}
		_, _ = c.Write(b)
		_, _ = io.Copy(io.Discard, c)
	}()
	s := newNode(t, store.Slave)
	c := startClient(t, s, clientConfig(2), ln.Addr().String())
	require.Eventually(t, func() bool { return s.st.MaxPhyOffset() == 43120 }, 10*time.Second, time.Millisecond)
	require.Equal(t, []EpochEntry{{1, 0}, {5, 21560}}, entries(s.ep.Entries()))
	// The client raises the confirm limit after the append it follows.
	require.Eventually(t, func() bool { return s.st.ConfirmOffset() == 43120 }, 10*time.Second, time.Millisecond,
		"confirm offset %d", s.st.ConfirmOffset())
	require.Eventually(t, func() bool {
		n := int64(0)
		for _, q := range s.st.QueueIDs("AswTopic") {
			n += s.st.MaxOffset("AswTopic", q)
		}
		return n == 80
	}, 10*time.Second, time.Millisecond, "the 80 sends, in the consume queues")
	require.Equal(t, []string{"AswTopic"}, s.st.Topics())
	require.NoError(t, c.Close())
	<-done
}
