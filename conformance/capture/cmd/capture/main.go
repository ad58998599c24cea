// Command capture is a recording TCP proxy for RocketMQ remoting traffic:
//
//	go run ./capture/cmd/capture -listen 127.0.0.1:9877 -target 127.0.0.1:9876 \
//	    -client "go client" -server "java-5.3 namesrv" -out ../codec/testdata/golden
//
// Point a client at -listen; every frame in both directions is forwarded
// unchanged and written as a golden fixture until Ctrl-C.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rocketgo/rocketgo/conformance/capture"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9877", "loopback address to listen on")
	target := flag.String("target", "127.0.0.1:9876", "real server address")
	client := flag.String("client", "client", "source label of frames sent by clients")
	server := flag.String("server", "server", "source label of frames sent by the server")
	out := flag.String("out", "golden", "fixture directory")
	perKind := flag.Int("per-kind", 2, "frames kept per source/direction/code/serialization")
	maxBytes := flag.Int("max-frame", 24<<10, "skip frames larger than this")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rec, err := capture.NewRecorder(*out, *perKind, *maxBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p, err := capture.NewProxy(capture.ProxyConfig{Listen: *listen, Target: *target, ServerSource: *server, Sink: rec, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p.SetClientSource(*client)
	log.Info("capturing", "listen", p.Addr(), "target", *target, "out", *out)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	_ = p.Close()
	log.Info("stopped", "frames", len(rec.Names()), "err", rec.Err())
}
