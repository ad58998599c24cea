package grpcsvc

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	gstatus "google.golang.org/grpc/status"

	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// Limits on idle and hostile streams, beside the ones ServerOptions has
// always set (MaxRecvMsgSize, MaxConcurrentStreams per connection,
// keepalive with enforcement, MaxConnectionIdle).
//
// Java's proxy (5.3.3 GrpcServerBuilder) sets only maxInboundMessageSize
// (grpcMaxInboundMessageSize, 130 MiB) and maxConnectionIdle
// (grpcClientIdleTimeMills, 120 s) on grpc-java's Netty server, whose
// defaults then bound metadata to 8 KiB (maxInboundMetadataSize) and leave
// concurrent calls per connection unbounded. grpc-go's defaults differ
// where it matters here: metadata up to 16 MiB per stream. So:
//
//   - maxHeaderListSize: 8 KiB of metadata per request, grpc-java's default
//     that Java's proxy runs with (the SDKs send a few hundred bytes);
//   - a Telemetry stream must send its first command (the SDKs send their
//     Settings at once when they open it) within TelemetryFirstCommand, or
//     the server ends it with INVALID_ARGUMENT: a stream that never sends
//     does not hold its goroutine and buffers for good. Streams that sent
//     their Settings are clients and stay, however quiet, until the client
//     ends them or the connection dies (keepalive).
const (
	maxHeaderListSize            = 8 << 10
	defaultTelemetryFirstCommand = 30 * time.Second
)

// limitOptions are the grpc.Server options of the limits above.
func limitOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxHeaderListSize(maxHeaderListSize)}
}

type telemetryStream = grpc.BidiStreamingServer[v2.TelemetryCommand, v2.TelemetryCommand]

// firstCommand is the stream's first Recv, bounded by
// Config.TelemetryFirstCommand (negative: unbounded). The wait runs on a
// short-lived goroutine; when time is up the handler returns, which ends
// the stream and so that Recv.
func (s *Service) firstCommand(stream telemetryStream) (*v2.TelemetryCommand, error) {
	d := s.cfg.TelemetryFirstCommand
	if d < 0 {
		return stream.Recv()
	}
	type recv struct {
		cmd *v2.TelemetryCommand
		err error
	}
	ch := make(chan recv, 1)
	go func() {
		cmd, err := stream.Recv()
		ch <- recv{cmd, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.cmd, r.err
	case <-t.C:
		return nil, gstatus.Error(codes.InvalidArgument, "no telemetry command within "+d.String())
	}
}
