package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// maxFrame matches the Java decoder's default frame limit (16 MiB).
const maxFrame = 16 << 20

// Sink receives every complete frame seen by a Proxy. fromClient tells the
// direction; requestCode is the code of the request a response answers (the
// frame's own code for requests, -1 when the request was not seen).
type Sink interface {
	Frame(source string, fromClient bool, requestCode int32, raw []byte, f *Frame)
}

// ProxyConfig configures a Proxy.
type ProxyConfig struct {
	Listen       string // loopback ip:port to listen on ("127.0.0.1:0" picks a port)
	Target       string // real server ip:port
	ServerSource string // label for frames the server sends, e.g. "java-5.3 broker"
	Sink         Sink   // may be nil: forward only
	Logger       *slog.Logger
}

// Proxy forwards TCP connections to Target and reports every frame to Sink.
// The label of client frames is taken per connection from ClientSource at
// accept time, so one proxy can record several clients one after another.
type Proxy struct {
	cfg          ProxyConfig
	ln           net.Listener
	clientSource atomic.Pointer[string]
	wg           sync.WaitGroup
	mu           sync.Mutex
	conns        map[net.Conn]struct{} // guarded by mu
	closed       bool                  // guarded by mu
}

// NewProxy starts listening; call Serve (usually in a goroutine) and Close.
func NewProxy(cfg ProxyConfig) (*Proxy, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("capture: listen %s: %w", cfg.Listen, err)
	}
	p := &Proxy{cfg: cfg, ln: ln, conns: map[net.Conn]struct{}{}}
	src := "client"
	p.clientSource.Store(&src)
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the bound listen address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetClientSource labels frames from connections accepted from now on.
func (p *Proxy) SetClientSource(s string) { p.clientSource.Store(&s) }

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		p.wg.Add(1)
		go p.handle(c, *p.clientSource.Load())
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) handle(client net.Conn, clientSource string) {
	defer p.wg.Done()
	defer p.untrack(client)
	d := net.Dialer{Timeout: 5 * time.Second}
	server, err := d.DialContext(context.Background(), "tcp", p.cfg.Target)
	if err != nil {
		p.cfg.Logger.Warn("capture: dial target", "target", p.cfg.Target, "err", err)
		return
	}
	if !p.track(server) {
		_ = server.Close()
		return
	}
	defer p.untrack(server)
	var pending sync.Map // opaque -> request code, for naming responses
	done := make(chan struct{}, 2)
	pipe := func(src, dst net.Conn, fromClient bool, label string) {
		defer func() { done <- struct{}{} }()
		for {
			raw, err := ReadFrame(src, maxFrame)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					p.cfg.Logger.Debug("capture: read", "err", err)
				}
				return
			}
			// Report first: a request's opaque must be registered before
			// the peer can possibly answer it.
			p.report(label, fromClient, raw, &pending)
			if _, err := dst.Write(raw); err != nil {
				return
			}
		}
	}
	go pipe(client, server, true, clientSource)
	go pipe(server, client, false, p.cfg.ServerSource)
	<-done // either side ending tears both down
	_ = client.Close()
	_ = server.Close()
	<-done
}

func (p *Proxy) report(label string, fromClient bool, raw []byte, pending *sync.Map) {
	f, err := ParseFrame(raw)
	if err != nil {
		p.cfg.Logger.Warn("capture: undecodable frame", "source", label, "err", err)
		return
	}
	// Requests flow both ways (the broker calls clients too), so the pending
	// table is keyed by direction as well as opaque.
	key := [2]int64{int64(f.Opaque), 0}
	reqCode := f.Code
	if f.IsResponse() {
		if !fromClient {
			key[1] = 1
		}
		reqCode = -1
		if v, ok := pending.LoadAndDelete(key); ok {
			reqCode = v.(int32)
		}
	} else {
		if fromClient {
			key[1] = 1
		}
		pending.Store(key, f.Code)
	}
	if p.cfg.Sink != nil {
		p.cfg.Sink.Frame(label, fromClient, reqCode, raw, f)
	}
}

// Close stops accepting, closes every proxied connection and waits for the
// forwarding goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}
