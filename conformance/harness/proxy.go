package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Proxy is a running gRPC proxy in front of a cluster (Apache's
// rocketmq-proxy 5.3.3 in cluster mode, or one of ours).
type Proxy struct {
	Name         string
	GRPCAddr     string // 127.0.0.1:port
	RemotingAddr string // 127.0.0.1:port
	proc         *Process
}

// HaveJavaProxy reports whether Apache's proxy jars are fetched
// (scripts/javaserver.sh fetch-proxy).
func (e Env) HaveJavaProxy() bool {
	if _, err := os.Stat(filepath.Join(e.Root, "conformance", ".cache", "java-proxy", "lib")); err != nil {
		return false
	}
	_, err := execLookPath("java")
	return err == nil
}

// StartJavaProxy starts Apache's proxy in cluster mode against namesrv
// (whose brokers must be registered already: the proxy creates its
// heartbeat-syncer topic on the cluster at start-up) and waits until its
// gRPC and remoting ports accept connections.
func StartJavaProxy(ctx context.Context, env Env, namesrv, dir string, extraConf []string) (*Proxy, error) {
	if !env.HaveJavaProxy() {
		return nil, fmt.Errorf("%w: no conformance/.cache/java-proxy/lib (make -C conformance java-server)", ErrNoJava)
	}
	grpcPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	remPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: mkdir: %w", err)
	}
	p, err := StartProcess("proxy", dir,
		[]string{"FOREGROUND=1", "PROXY_EXTRA_CONF=" + strings.Join(extraConf, ",\n")},
		env.Script, "start-proxy", namesrv, strconv.Itoa(grpcPort), strconv.Itoa(remPort), dir)
	if err != nil {
		return nil, err
	}
	px := &Proxy{Name: "java-proxy", proc: p,
		GRPCAddr: "127.0.0.1:" + strconv.Itoa(grpcPort), RemotingAddr: "127.0.0.1:" + strconv.Itoa(remPort)}
	if err := px.waitListening(ctx, 180*time.Second); err != nil {
		px.Close()
		return nil, err
	}
	return px, nil
}

// StartOurProxy starts one of our binaries as the proxy (argv[0] a path
// under bin/) with the given gRPC and remoting ports and waits for them.
func StartOurProxy(ctx context.Context, name, dir string, grpcPort, remotingPort int, argv ...string) (*Proxy, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: mkdir: %w", err)
	}
	p, err := StartProcess(name, dir, nil, argv...)
	if err != nil {
		return nil, err
	}
	px := &Proxy{Name: name, proc: p, GRPCAddr: "127.0.0.1:" + strconv.Itoa(grpcPort)}
	if remotingPort > 0 {
		px.RemotingAddr = "127.0.0.1:" + strconv.Itoa(remotingPort)
	}
	if err := px.waitListening(ctx, 60*time.Second); err != nil {
		px.Close()
		return nil, err
	}
	return px, nil
}

func (px *Proxy) waitListening(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	for {
		if done, err := px.proc.Exited(); done {
			return fmt.Errorf("harness: %s exited early (%v): %s", px.Name, err, px.proc.Tail(3000))
		}
		ready := true
		for _, a := range []string{px.GRPCAddr, px.RemotingAddr} {
			if a == "" {
				continue
			}
			c, err := d.DialContext(ctx, "tcp", a)
			if err != nil {
				ready = false
				break
			}
			_ = c.Close()
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: %s not listening on %s within %v\n%s", px.Name, px.GRPCAddr, timeout, px.proc.Tail(3000))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Log is the path of the proxy's log.
func (px *Proxy) Log() string { return px.proc.Log }

// Tail is the end of the proxy's log.
func (px *Proxy) Tail(n int) string { return px.proc.Tail(n) }

// Close stops the proxy.
func (px *Proxy) Close() { px.proc.Stop(10 * time.Second) }
