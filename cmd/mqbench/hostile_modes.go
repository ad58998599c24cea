package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/codec"
)

// Attack modes of `mqbench hostile -mode` besides the mix (hostile.go),
// each one misbehaviour on its own so its cost to the broker and to the
// well-behaved probe beside it is measured apart:
//
//	storm     pipelined requests (-stormCode send|heartbeat|pull), replies
//	          never read; when the broker cuts the connection the attacker
//	          reconnects at once and starts again, until the attack ends
//	bigheader -bigHeaderFrames frames with headers of -bigHeaderLen bytes
//	          (just under maxHeaderLength) over -bigHeaderConns connections
//	stuckpull -stuckConns connections each pipeline -stuckPulls pulls of a
//	          full backlog, then neither read nor write: how long until the
//	          broker cuts them (bytes it cannot send, kernel included)
const (
	modeMix       = "mix"
	modeStorm     = "storm"
	modeBigHeader = "bigheader"
	modeStuckPull = "stuckpull"
)

// modeConfig is the part of hostileConfig the single-attack modes use.
type modeConfig struct {
	Mode            string
	StormCode       string // send | heartbeat | pull
	StormConns      int    // attacking connections at a time
	StormMaxDials   int    // bound on reconnects over the whole attack
	BigHeaderConns  int
	BigHeaderFrames int // in total
	BigHeaderLen    int
	BigHeaderWindow int // frames in flight per connection; 0: all at once
	StuckConns      int
	StuckPulls      int           // pulls each stuck connection sends
	Settle          time.Duration // after the attack: wait, then sample RSS again
}

func modeFlags(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}, cfg *modeConfig) {
	fs.StringVar(&cfg.Mode, "mode", modeMix, "attack: mix | storm | bigheader | stuckpull")
	fs.StringVar(&cfg.StormCode, "stormCode", "send", "storm: request pipelined without reading (send | heartbeat | pull)")
	fs.IntVar(&cfg.StormConns, "stormConns", 1, "storm: attacking connections at a time")
	fs.IntVar(&cfg.StormMaxDials, "stormMaxDials", 100000, "storm: bound on connections opened")
	fs.IntVar(&cfg.BigHeaderConns, "bigHeaderConns", 4, "bigheader: connections")
	fs.IntVar(&cfg.BigHeaderFrames, "bigHeaderFrames", 400, "bigheader: frames over all connections")
	fs.IntVar(&cfg.BigHeaderLen, "bigHeaderLen", 1047893, "bigheader: header length in bytes")
	fs.IntVar(&cfg.BigHeaderWindow, "bigHeaderWindow", 0, "bigheader: frames in flight per connection (0: all at once)")
	fs.IntVar(&cfg.StuckConns, "stuckConns", 4, "stuckpull: connections")
	fs.IntVar(&cfg.StuckPulls, "stuckPulls", 400, "stuckpull: pulls each connection sends before it stops")
	fs.DurationVar(&cfg.Settle, "settle", 0, "after the attack, wait this long and sample the broker's RSS again")
}

// StormOutcome is what the reconnecting non-reader achieved.
type StormOutcome struct {
	Code       string  `json:"code"`
	Conns      int     `json:"conns"` // connections opened
	Cuts       int     `json:"cuts"`  // of them cut by the broker before the attack ended
	Frames     int64   `json:"frames"`
	Bytes      int64   `json:"bytes"`
	MeanLifeMs float64 `json:"meanLifeMs"` // open → cut by the broker
	MaxLifeMs  float64 `json:"maxLifeMs"`
}

// BigHeaderOutcome is what the big-header senders got.
type BigHeaderOutcome struct {
	Sent     int     `json:"sent"`
	Answered int     `json:"answered"`
	Closed   int     `json:"closed"`  // connections the broker closed
	Seconds  float64 `json:"seconds"` // attack start → the last sender done
}

// StuckOutcome is one stuck puller: how long after it went quiet the
// broker cut it (-1: never, within the attack).
type StuckOutcome struct {
	Pulls         int     `json:"pulls"`
	QuietAfterS   float64 `json:"quietAfterS"`
	CutAfterQuiet float64 `json:"cutAfterQuietS"`
}

// startMode starts cfg.Mode's attackers; the returned function waits for
// them (they stop at deadline) and records their outcome in sum.
func startMode(cfg hostileConfig, start, deadline time.Time) (func(*HostileSummary), error) {
	switch cfg.Mode {
	case modeStorm:
		frame, err := stormFrame(cfg.StormCode, cfg.Topic)
		if err != nil {
			return nil, err
		}
		s := &storm{code: cfg.StormCode}
		var wg sync.WaitGroup
		dials := atomic.Int64{}
		for range max(cfg.StormConns, 1) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.run(cfg.Broker, frame, deadline, &dials, int64(cfg.StormMaxDials))
			}()
		}
		return func(sum *HostileSummary) { wg.Wait(); o := s.outcome(); sum.Storm = &o }, nil
	case modeBigHeader:
		var o BigHeaderOutcome
		var mu sync.Mutex
		var wg sync.WaitGroup
		conns := max(cfg.BigHeaderConns, 1)
		for i := range conns {
			n := cfg.BigHeaderFrames / conns
			if i < cfg.BigHeaderFrames%conns {
				n++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sent, answered, closed := bigHeaderSender(cfg.Broker, cfg.Topic, cfg.BigHeaderLen, n, cfg.BigHeaderWindow, deadline)
				mu.Lock()
				o.Seconds = max(o.Seconds, time.Since(start).Seconds())
				o.Sent += sent
				o.Answered += answered
				if closed {
					o.Closed++
				}
				mu.Unlock()
			}()
		}
		return func(sum *HostileSummary) { wg.Wait(); sum.BigHeader = &o }, nil
	case modeStuckPull:
		out := make([]StuckOutcome, max(cfg.StuckConns, 1))
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = stuckPuller(cfg.Broker, cfg.Topic, cfg.StuckPulls, start, deadline)
			}()
		}
		return func(sum *HostileSummary) { wg.Wait(); sum.Stuck = out }, nil
	}
	return nil, fmt.Errorf("hostile: unknown -mode %q", cfg.Mode)
}

func stormFrame(code, topic string) ([]byte, error) {
	switch code {
	case "send":
		return sendFrameBytes(topic, 1024), nil
	case "heartbeat":
		return heartbeatFrame(), nil
	case "pull":
		return pullFrame(topic), nil
	}
	return nil, fmt.Errorf("hostile: unknown -stormCode %q", code)
}

// storm is the reconnecting non-reader of one attack.
type storm struct {
	code string

	mu     sync.Mutex
	conns  int
	cuts   int
	frames int64
	bytes  int64
	life   time.Duration
	maxL   time.Duration
}

// run opens a connection, pipelines frame (64 per write) without reading
// until the broker cuts it, and reconnects at once; until deadline or
// until dials reaches maxDials.
func (s *storm) run(addr string, frame []byte, deadline time.Time, dials *atomic.Int64, maxDials int64) {
	burst := make([]byte, 0, 64*len(frame))
	for range 64 {
		burst = append(burst, frame...)
	}
	for time.Now().Before(deadline) && dials.Add(1) <= maxDials {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue // a refused dial counts against maxDials: bounded
		}
		opened := time.Now()
		var written int64
		_ = nc.SetWriteDeadline(deadline)
		for {
			n, err := nc.Write(burst)
			written += int64(n)
			if err != nil {
				break // cut by the broker, or the attack is over
			}
		}
		_ = nc.Close()
		life := time.Since(opened)
		s.mu.Lock()
		s.conns++
		s.bytes += written
		s.frames += written / int64(len(frame))
		if time.Now().Before(deadline) { // cut, not ended by us
			s.cuts++
			s.life += life
			s.maxL = max(s.maxL, life)
		}
		s.mu.Unlock()
	}
}

func (s *storm) outcome() StormOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := StormOutcome{Code: s.code, Conns: s.conns, Cuts: s.cuts, Frames: s.frames, Bytes: s.bytes, MaxLifeMs: float64(s.maxL.Microseconds()) / 1000}
	if s.cuts > 0 {
		o.MeanLifeMs = float64(s.life.Microseconds()) / 1000 / float64(s.cuts)
	}
	return o
}

// bigHeaderRequest is a SEND_MESSAGE_V2 whose JSON header is padded with
// filler extFields to exactly hlen bytes (when hlen is above the plain
// header's length), and a 1 KiB body.
func bigHeaderRequest(topic string, hlen int, opaque int32) []byte {
	f := sendFrame(topic, 1024)
	f.Opaque = opaque
	f.Serialize = codec.SerializeJSON
	headerLen := func() int { return int(binary.BigEndian.Uint32(f.AppendTo(nil)[4:]) & 0xFFFFFF) }
	base := headerLen()
	if hlen <= base+64 {
		return f.AppendTo(nil)
	}
	// `,"z10000000":"vvvvvvvv"` is 23 bytes; the last value takes the rest.
	for i := range (hlen - base - 64) / 23 {
		f.Ext = append(f.Ext, codec.KV{Key: "z" + strconv.Itoa(10000000+i), Value: "vvvvvvvv"})
	}
	f.Ext = append(f.Ext, codec.KV{Key: "zlast", Value: ""})
	if d := hlen - headerLen(); d > 0 {
		f.Ext[len(f.Ext)-1].Value = strings.Repeat("v", d)
	}
	return f.AppendTo(nil)
}

// bigHeaderSender writes n big-header frames on one connection while it
// reads the replies; it returns what it sent, what was answered and
// whether the broker closed the connection.
func bigHeaderSender(addr, topic string, hlen, n, window int, deadline time.Time) (sent, answered int, closed bool) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, 0, true
	}
	defer nc.Close()
	frame := bigHeaderRequest(topic, hlen, 1)
	done := make(chan struct{})
	var got atomic.Int32
	replies := make(chan struct{}, n) // one per reply: never blocks the reader
	var rerr error
	go func() {
		defer close(done)
		_ = nc.SetReadDeadline(deadline)
		var prefix [4]byte
		buf := make([]byte, 0, 4096)
		for int(got.Load()) < n {
			if _, err := io.ReadFull(nc, prefix[:]); err != nil {
				rerr = err
				return
			}
			l := int(binary.BigEndian.Uint32(prefix[:]))
			if cap(buf) < l {
				buf = make([]byte, l)
			}
			if _, err := io.ReadFull(nc, buf[:l]); err != nil {
				rerr = err
				return
			}
			got.Add(1)
			replies <- struct{}{}
		}
	}()
	_ = nc.SetWriteDeadline(deadline)
	for ; sent < n; sent++ {
		if window > 0 && sent >= window {
			select {
			case <-replies: // one answered: room for the next
			case <-done:
				window = 0 // the reader stopped: no more replies to wait for
			}
		}
		if _, err := nc.Write(frame); err != nil {
			break
		}
	}
	<-done
	timedOut := rerr != nil && errors.Is(rerr, os.ErrDeadlineExceeded)
	return sent, int(got.Load()), rerr != nil && !timedOut
}

// stuckPuller pipelines pulls of the backlog on a connection with a small
// receive buffer, never reads, and stops writing once it has sent pulls
// (or its writes stall for a second). It then watches, without reading,
// for the broker to cut the connection (FIN or RST).
func stuckPuller(addr, topic string, pulls int, start, deadline time.Time) StuckOutcome {
	o := StuckOutcome{CutAfterQuiet: -1}
	d := net.Dialer{Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		o.CutAfterQuiet = 0
		return o
	}
	defer nc.Close()
	tc := nc.(*net.TCPConn)
	_ = tc.SetReadBuffer(16 << 10)
	frame := pullFrame(topic)
	for o.Pulls < pulls && time.Now().Before(deadline) {
		_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := nc.Write(frame); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				o.QuietAfterS = time.Since(start).Seconds()
				o.CutAfterQuiet = 0
				return o
			}
			break
		}
		o.Pulls++
	}
	quiet := time.Now()
	o.QuietAfterS = quiet.Sub(start).Seconds()
	rc, err := tc.SyscallConn()
	if err != nil {
		return o
	}
	for time.Now().Before(deadline) {
		cut := false
		_ = rc.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			if n, err := unix.Poll(p, 50); err == nil && n > 0 && p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
				cut = true
			}
		})
		if cut {
			o.CutAfterQuiet = time.Since(quiet).Seconds()
			return o
		}
	}
	return o
}
