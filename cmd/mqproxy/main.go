package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/proxy/grpcsvc"
	"github.com/rocketgo/rocketgo/proxy/remoting"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	stop, err := start(os.Args[1:], os.Stdout, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mqproxy:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	log.Info("mqproxy: shutting down")
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "mqproxy:", err)
		os.Exit(1)
	}
}

// start parses args and serves; the returned func stops the proxy.
func start(args []string, out io.Writer, log *slog.Logger) (func() error, error) {
	fs := flag.NewFlagSet("mqproxy", flag.ContinueOnError)
	pc := fs.String("pc", "", "proxy config file (Java's rmq-proxy.json: grpcServerPort, remotingListenPort, namesrvAddr ...)")
	ns := fs.String("n", "", "name server address list, ';'-separated (overrides namesrvAddr)")
	pm := fs.String("pm", "", "proxy mode: cluster (local mode is rocketgo / mqbroker enableGrpcProxy=true)")
	bind := fs.String("bind", "", "interface to bind, both ports (default all); not a Java key")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	pf := grpcsvc.DefaultProxyFile()
	var rk remotingKeys
	if *pc != "" {
		var err error
		if pf, err = grpcsvc.LoadProxyFile(*pc); err != nil {
			return nil, err
		}
		if rk, err = loadRemotingKeys(*pc); err != nil {
			return nil, err
		}
		for _, k := range pf.Unknown {
			if !isRemotingKey(k) {
				log.Warn("mqproxy: unknown rmq-proxy.json key ignored", "key", k)
			}
		}
	}
	if pf.NamesrvAddr == "" {
		pf.NamesrvAddr = os.Getenv("NAMESRV_ADDR")
	}
	if *ns != "" {
		pf.NamesrvAddr = *ns
	}
	if *pm != "" {
		pf.ProxyMode = *pm
	}
	if !strings.EqualFold(pf.ProxyMode, "cluster") {
		return nil, fmt.Errorf("proxyMode %q: mqproxy runs in cluster mode only (local mode: rocketgo, or mqbroker with enableGrpcProxy=true)", pf.ProxyMode)
	}
	if strings.TrimSpace(pf.NamesrvAddr) == "" {
		return nil, errors.New("no name server: set namesrvAddr in rmq-proxy.json, -n or NAMESRV_ADDR")
	}
	cfg := grpcsvc.Default()
	cfg.GRPCPort = pf.GrpcServerPort
	if pf.MaxMessageSize > 0 {
		cfg.MaxMessageSize = pf.MaxMessageSize
	}
	if pf.GrpcMaxInboundSize > 0 {
		cfg.MaxRecvMsgSize = pf.GrpcMaxInboundSize
	}
	if pf.MinInvisibleRecvMs > 0 {
		cfg.MinInvisible = time.Duration(pf.MinInvisibleRecvMs) * time.Millisecond
	}
	if pf.RelayTimeoutS > 0 {
		cfg.RelayTimeout = time.Duration(pf.RelayTimeoutS) * time.Second
	}
	if pf.GrpcClientIdleMs > 0 {
		cfg.IdleTimeout = time.Duration(pf.GrpcClientIdleMs) * time.Millisecond
	}
	cfg.Renew = pf.RenewKeys.Config()
	// tls.* members of the file are Java's -Dtls.* (mode shared by the
	// gRPC port; tls.enable and tls.client.* for the brokers).
	tc, err := tlsconf.Load(pf.TLSProps)
	if err != nil {
		return nil, err
	}
	gtls := pf.GRPCTLS(tc.ServerMode)
	cfg.TLS = &gtls
	authCfg, signer, err := pf.Auth()
	if err != nil {
		return nil, err
	}
	cfg.Auth, cfg.ClusterName, cfg.AuthorityCache = authCfg, pf.RocketMQClusterName, pf.AuthorityConfig()
	ep, err := grpcsvc.Start(grpcsvc.EndpointConfig{Listen: net.JoinHostPort(*bind, strconv.Itoa(pf.GrpcServerPort)),
		NamesrvAddrs: []string{pf.NamesrvAddr}, TLS: &tc, Signer: signer, Service: cfg, Logger: log})
	if err != nil {
		return nil, err
	}
	if pf.GrpcServerPort == 0 { // a test's free port: advertise what was bound
		_, p, _ := net.SplitHostPort(ep.Addr())
		if n, err := strconv.Atoi(p); err == nil {
			ep.Service().SetAdvertisedPort(n)
		}
	}
	rs, err := remoting.Start(remoting.Config{Listen: net.JoinHostPort(*bind, strconv.Itoa(pf.RemotingListenPort)),
		AccessAddr: rk.RemotingAccessAddr, NamesrvAddrs: []string{pf.NamesrvAddr}, RegionID: rk.RegionID, TraceOn: rk.TraceOn, Logger: log})
	if err != nil {
		return nil, errors.Join(err, ep.Close())
	}
	fmt.Fprintf(out, "mqproxy ready grpc=%s remoting=%s namesrv=%s cluster=%s\n", ep.Addr(), rs.Addr(), pf.NamesrvAddr, pf.RocketMQClusterName)
	return func() error { return errors.Join(rs.Close(), ep.Close()) }, nil
}

// remotingKeys are the rmq-proxy.json keys of the remoting port beyond
// remotingListenPort (Java's ProxyConfig names and defaults).
type remotingKeys struct {
	RemotingAccessAddr string `json:"remotingAccessAddr"`
	RegionID           string `json:"regionId"`
	TraceOn            bool   `json:"traceOn"`
}

func isRemotingKey(k string) bool {
	return k == "remotingAccessAddr" || k == "regionId" || k == "traceOn"
}

func loadRemotingKeys(path string) (remotingKeys, error) {
	var rk remotingKeys
	data, err := os.ReadFile(path)
	if err != nil {
		return rk, fmt.Errorf("proxy config: %w", err)
	}
	if err := fastjson.Unmarshal(data, &rk); err != nil {
		return rk, fmt.Errorf("proxy config %s: %w", path, err)
	}
	return rk, nil
}
