package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// `mqbench hawait` watches a master's GET_BROKER_HA_STATUS (Java's
// HARuntimeInfo: masterCommitLogMaxOffset and, per slave connection, the
// slaveAckOffset the slave last reported) until a slave has acknowledged
// everything the master holds.
//
// With -new (the catch-up benchmark) only slave connections that were not
// there at the first sample count, and the target is the master's max
// offset at the first sample (the master takes no sends meanwhile): start
// the command, then the slave. The transfer time runs from the last sample
// without the new connection (so a slave's own start-up is not counted,
// and the time is never understated by more than one -interval) to the
// first sample with its ack at the target; MB/s = (target − -base) / that
// time, where -base is the slave's commit-log end when it stopped.
//
// Without -new it waits until any slave is in sync with the master's
// current max offset (a readiness check before a benchmark step).

// haWaitConfig is everything `mqbench hawait` takes.
type haWaitConfig struct {
	Master   string
	New      bool
	Base     int64 // slave's commit-log end before the catch-up; < 0: its first report
	Interval time.Duration
	Timeout  time.Duration
	Ready    string // created after the first sample (start the slave then)
	Progress io.Writer
}

func (c *haWaitConfig) validate() error {
	switch {
	case c.Master == "":
		return errors.New("hawait: need -m (master)")
	case c.Interval <= 0 || c.Timeout <= 0:
		return errors.New("hawait: -interval and -timeout must be > 0")
	}
	return nil
}

// HAWaitSummary is the end-of-run report of `mqbench hawait`.
type HAWaitSummary struct {
	Role        string  `json:"role"` // hawait
	Slave       string  `json:"slave"`
	Target      int64   `json:"target"` // master max offset waited for
	Base        int64   `json:"base"`
	Bytes       int64   `json:"bytes"`       // target − base
	ConnectMs   float64 `json:"connectMs"`   // start → first sample with the slave connected
	DoneMs      float64 `json:"doneMs"`      // start → first sample with the slave at the target
	TransferSec float64 `json:"transferSec"` // last sample without the slave → done
	MBps        float64 `json:"mbps"`        // bytes / transferSec / 1e6
	Samples     int     `json:"samples"`
	MasterMoved bool    `json:"masterMoved"` // the master's max offset changed meanwhile
}

func (s *HAWaitSummary) writeText(w io.Writer) {
	fmt.Fprintf(w, "=== mqbench hawait slave=%s target=%d base=%d\n", s.Slave, s.Target, s.Base)
	fmt.Fprintf(w, "connected after %.0f ms, in sync after %.0f ms (%d samples)\n", s.ConnectMs, s.DoneMs, s.Samples)
	fmt.Fprintf(w, "transfer  %d bytes in %.3f s = %.1f MB/s", s.Bytes, s.TransferSec, s.MBps)
	if s.MasterMoved {
		fmt.Fprint(w, " (the master's max offset moved meanwhile)")
	}
	fmt.Fprintln(w)
}

func (s *HAWaitSummary) writeJSON(w io.Writer) error { return json.NewEncoder(w).Encode(s) }

// haStatus is the part of HARuntimeInfo hawait reads.
type haStatus struct {
	Master                   bool  `json:"master"`
	MasterCommitLogMaxOffset int64 `json:"masterCommitLogMaxOffset"`
	HAConnectionInfo         []struct {
		Addr           string `json:"addr"`
		SlaveAckOffset int64  `json:"slaveAckOffset"`
	} `json:"haConnectionInfo"`
}

func queryHAStatus(c *rpcConn, cl *call) (*haStatus, error) {
	if err := c.invoke(newRequest(codec.ReqGetBrokerHaStatus), cl, ctlTimeout); err != nil {
		return nil, err
	}
	if cl.resp.Code != int32(codec.RespSuccess) {
		return nil, respError("HA status", &cl.resp)
	}
	var st haStatus
	if err := unmarshalFastjson(cl.resp.Body, &st); err != nil {
		return nil, fmt.Errorf("HA status: %w", err)
	}
	if !st.Master {
		return nil, errors.New("HA status: not a master")
	}
	return &st, nil
}

func runHAWait(cfg haWaitConfig) (HAWaitSummary, error) {
	if err := cfg.validate(); err != nil {
		return HAWaitSummary{}, err
	}
	c, err := dialRPC(cfg.Master)
	if err != nil {
		return HAWaitSummary{}, err
	}
	defer func() { c.close() }()
	cl := newCall()
	start := time.Now()
	deadline := start.Add(cfg.Timeout)
	sum := HAWaitSummary{Role: "hawait", Base: cfg.Base, Target: -1}
	old := map[string]bool{} // -new: connections of the first sample
	lastWithout := start
	var connected bool
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	for {
		st, err := queryHAStatus(c, cl)
		now := time.Now()
		if err != nil {
			if c.broken() { // reconnect on the next tick
				c.close()
				if c, err = dialRPC(cfg.Master); err != nil {
					return sum, err
				}
			}
			if now.After(deadline) {
				return sum, fmt.Errorf("hawait: %w", err)
			}
		} else {
			sum.Samples++
			if sum.Samples == 1 {
				if cfg.New {
					sum.Target = st.MasterCommitLogMaxOffset
					for _, h := range st.HAConnectionInfo {
						old[h.Addr] = true
					}
				}
				if cfg.Ready != "" {
					if err := os.WriteFile(cfg.Ready, nil, 0o644); err != nil {
						return sum, fmt.Errorf("hawait: %w", err)
					}
				}
			} else if cfg.New && st.MasterCommitLogMaxOffset != sum.Target {
				sum.MasterMoved = true
			}
			target := sum.Target
			if !cfg.New {
				target = st.MasterCommitLogMaxOffset
			}
			found := false
			for _, h := range st.HAConnectionInfo {
				if old[h.Addr] {
					continue
				}
				found = true
				if !connected {
					connected = true
					sum.ConnectMs = ms(now.Sub(start))
					sum.Slave = h.Addr
					if sum.Base < 0 {
						sum.Base = max(h.SlaveAckOffset, 0)
					}
				}
				if h.SlaveAckOffset >= target {
					sum.Target = target
					sum.Slave = h.Addr
					sum.DoneMs = ms(now.Sub(start))
					sum.TransferSec = now.Sub(lastWithout).Seconds()
					if sum.Base >= 0 {
						sum.Bytes = target - sum.Base
					}
					if sum.TransferSec > 0 {
						sum.MBps = float64(sum.Bytes) / sum.TransferSec / 1e6
					}
					return sum, nil
				}
			}
			if !found {
				lastWithout = now
			}
			if cfg.Progress != nil && sum.Samples%int(max(time.Second/cfg.Interval, 1)) == 0 {
				fmt.Fprintf(cfg.Progress, "[%5.1fs] master at %d, slaves %+v\n", now.Sub(start).Seconds(),
					st.MasterCommitLogMaxOffset, st.HAConnectionInfo)
			}
		}
		if now.After(deadline) {
			return sum, fmt.Errorf("hawait: no slave reached the master's offset within %v", cfg.Timeout)
		}
		<-tick.C
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func haWaitFlags(cfg *haWaitConfig, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("hawait", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Master, "m", "", "master broker ip:port (GET_BROKER_HA_STATUS)")
	fs.BoolVar(&cfg.New, "new", false, "catch-up: only slave connections made after the first sample count; target = the master's first max offset")
	fs.Int64Var(&cfg.Base, "base", -1, "slave's commit-log end before the catch-up (-1: its first report)")
	fs.DurationVar(&cfg.Interval, "interval", 50*time.Millisecond, "sampling interval")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.StringVar(&cfg.Ready, "ready", "", "file created after the first sample (with -new: start the slave after it exists)")
	return fs
}

// summaryWriter is a report printable as text or JSON.
type summaryWriter interface {
	writeText(io.Writer)
	writeJSON(io.Writer) error
}

func writeSummary(w io.Writer, asJSON bool, s summaryWriter) error {
	if asJSON {
		return s.writeJSON(w)
	}
	s.writeText(w)
	return nil
}
