// Package transport carries remoting frames over TCP: a gnet v2 server
// whose event loops only frame, decode, route and encode; a router that maps
// a request code to a handler and the worker pool it runs on; connections
// that accept replies in any order and send server-initiated requests; and a
// client with opaque correlation and one reused connection per address.
//
//	socket ─► OnTraffic (event loop)
//	            paused? ─► out of gnet's epoll interest: the bytes stay in
//	                       the kernel (readgate.go; see Bounds)
//	            NextFrame: bad length, header > MaxHeaderLength ─► close
//	            copy payload into a pooled Lease (frames > 64 KiB are read
//	            straight into it once complete), Decode: error ─► close
//	            header > 64 KiB? ─► within the server's big-header byte
//	                                budget (else paused until there is
//	                                room), decode and route on a goroutine,
//	                                the connection paused until it is done
//	            response flag, or a route that is not leased?
//	                └► detach: private copy of the frame, lease back to its pool
//	            response flag? ─► complete the Conn.Invoke waiting on its opaque
//	            Router: no route ─► REQUEST_CODE_NOT_SUPPORTED
//	                    inline   ─► handler on the loop, reply batched per read
//	                    pool     ─► bounded queue (full ─► SYSTEM_BUSY)
//	                                 └► worker: handler ─► Conn.Write
//	Conn.Write / WriteWithBody (any goroutine) ─► encode into a pooled buffer
//	    direct mode: pending ─► the server's writer goroutine for this
//	                 connection ─► one writev per burst, straight to the
//	                 socket (the event loop writes its inline replies itself)
//	    socket full: the rest stays in pending, uncopied (pull replies are
//	                 views of mapped segments) ─► the server's watcher
//	                 (its own epoll, EPOLLOUT one-shot) ─► writer again.
//	                 gnet's outbound buffer is never used.
//
// Bounds: memory is bounded whatever a peer sends or fails to read.
//   - A connection is paused (its requests are not read, so no new
//     replies are produced for it) while its unsent bytes exceed
//     WriteHighWater, until they fall to WriteLowWater; while it has
//     MaxInflightPerConn requests on pools whose handlers have not
//     returned, or taken over by a handler with Conn.BeginTask (the send
//     path's own queue), until half have: this bounds the replies still
//     coming and what one connection puts in a shared queue; while the
//     server's unsent total exceeds MaxUnsentTotal and it has unsent
//     bytes of its own; while a big header of it is decoded off the loop
//     (one per connection); and while its next big header waits for the
//     server's budget of big-header bytes off the wire and not yet
//     decoded. Whoever lowers a reason (writer, pool worker, decoder)
//     wakes the loop with gnet's Wake; the loop sets paused before it
//     checks the reasons again, so no wake-up is lost. Normal clients
//     (hundreds of requests in flight, replies read) never meet a pause.
//   - A paused connection is taken out of its loop's epoll interest
//     (readgate.go): its requests wait in the kernel and its peer's writes
//     block, so a client pipelining without reading costs nothing more
//     than its cap, not a copy of everything it sends. Queued requests of
//     a connection that closed still run (clients send requests whose
//     effect is all there is without the oneway flag); only their
//     replies are dropped. Big-header decodes run one per half CPU,
//     paced to 64 MiB/s each, in pooled extFields room.
//   - A connection with output pending (here or unacknowledged in the
//     kernel's send queue, SIOCOUTQ) of which its peer takes nothing for
//     WriteStallTimeout is reset (SO_LINGER 0: a FIN would queue behind
//     the bytes it does not take), whatever its buffers hold.
//   - Past MaxUnsentPerConn (output a pause cannot hold back:
//     server-initiated requests, deferred replies) the connection closes.
//   - Without read gating (a gnet layout it does not recognise) gnet
//     keeps reading a paused socket; either way the bytes a connection
//     holds undecoded (a paused backlog, an incomplete frame)
//     are bounded by MaxUnreadPerConn, and by MaxUnreadTotal over all
//     connections, which closes the one that has held bytes longest. A
//     paused backlog and an incomplete frame over 64 KiB are moved out of
//     gnet's ring (which grows by doubling through pooled buffers: several
//     times the bytes in garbage) into pooled 64 KiB chunks (partial.go),
//     so the memory is what arrived; nothing is allocated for a length
//     only announced.
//   - A frame not complete FrameReadTimeout after its first bytes closes
//     the connection; bytes of an incomplete frame are not activity for
//     IdleTimeout. Every close for a bound logs a WARN with the remote and
//     the config key.
//   - Contract with a peer that stops reading: nothing it sent is dropped
//     while the connection is open; once it reads, every request it sent
//     is answered, unless a bound above closed the connection (logged).
//     Small replies waiting for a full socket are copied together into
//     the last pending buffer, so what waits costs its bytes.
//
// Ownership: a request routed with Router.Handle belongs to its handler and
// may be kept. A request routed with Router.HandleLeased is lent: it lives
// in a pooled buffer that is recycled when its Lease is released, so the
// hot paths (send, pull) take requests off the wire without allocating; a
// leased handler that keeps the request past its return calls Lease.Hold
// and later Lease.Release, and copies any string it keeps in a table. A
// handler returns its response (the transport sets opaque, response flag
// and version) or nil and replies later with Conn.Write. Oneway requests
// never get a reply, not even an error. A handler panic is answered
// SYSTEM_ERROR and the connection stays open.
//
// Pools are owned by whoever creates them: close servers and clients
// first, then their pools. Server.Close closes every connection (OnClose
// runs for each) and waits for the event loops; Client.Close closes its
// connections and waits for their reader goroutines.
//
// Responses are JSON unless the handler sets Serialize. Idle connections
// (no complete frame in and no byte out for ServerConfig.IdleTimeout) are
// closed; a pool
// with SetMaxQueueWait refuses requests that waited too long, as the Java
// broker's fast failure does.
//
// TLS and PROXY protocol (sniff.go, tlsconn.go; Java's tls.server.mode,
// keys in tlsconf). gnet has no TLS, so a connection's first bytes decide
// where it is served. ServerConfig.TLSMode Disabled (the zero value) and
// no ProxyProtocol: nothing is detected, OnOpen makes the Conn at once and
// a ClientHello fails as a bad frame length. Otherwise:
//
//	OnOpen ─► sniffer (no Conn yet; closed after IdleTimeout of silence)
//	first bytes: PROXY v1/v2 header ─► parsed (bounded), its source is
//	             the Conn's RemoteAddr; malformed ─► close
//	             0x16 ─► Disabled: close; else (at MaxTLSHandshakes in
//	                     progress, the oldest is closed for it) Dup the
//	                     fd, copy what gnet read, close the gnet
//	                     connection (epoll delete + close(2), no
//	                     shutdown(2): the dup keeps the socket) ─►
//	                     net.FileConn ─► tls.Server, TLSHandshakeTimeout
//	                     ─► reader goroutine (frames into the same Router,
//	                     leased as on the loop; a 4 KiB read buffer under
//	                     crypto/tls) + writer goroutine
//	             else ─► Enforcing: close; else a gnet Conn as always
//
// Plaintext never touches TLS code and pays nothing per message: one map
// insert/delete at accept when detection is on, and the same allocations
// per round trip (TestServerRoundTripTLSAllocBudget). A TLS connection
// keeps the loop's bounds in blocking form: MaxFrameLength,
// MaxHeaderLength, no read while MaxInflightPerConn requests are in flight
// or unsent bytes exceed WriteHighWater (until half / WriteLowWater),
// MaxUnsentPerConn closes, frames over 64 KiB count in MaxUnreadTotal
// while they arrive, IdleTimeout and FrameReadTimeout (frames over 64 KiB)
// are read deadlines, WriteStallTimeout a write deadline. Not counted for
// TLS connections: the server-wide MaxUnsentTotal and SIOCOUTQ stall
// detection (the write deadline does that job).
//
// Measured (go test -bench 'ServerSideTLS|RoundTripTLS' -count 3, 2 cores
// shared with other work, both ends in one process, 128-byte bodies, one
// permissive server; ranges over the runs):
//
//	                                  plaintext (gnet)     TLS 1.3 (hand-off)
//	server side, 64 pipelined         13.4-17.8 µs/op      14.3-17.5 µs/op
//	server side, 1 in flight          70-89 µs             49-53 µs
//	Client round trip, 64 in flight   12.7-17.6 µs/op      10.7-11.8 µs/op
//	Client round trip, 1 in flight    76-83 µs             62-78 µs
//	allocs, server side, 1 in flight  1 (the response)     3: the same 1 + 1 per record
//	                                                       read by crypto/tls (it boxes
//	                                                       an atLeastReader), each end
//	allocs, server side, 64 in flight 1                    1 (records carry several frames)
//	allocs, Client round trip         5                    7 at 1 in flight, 5 at 64
//
//	memory, idle established TLS connection: ~28 KiB heap (both ends'
//	tls.Conn, the server's Conn, outlet and read buffer) + ~11 KiB stacks
//	(the server's reader and writer goroutines)
//	memory, half handshake held (≤ MaxTLSHandshakes): ~13-15 KiB heap + ~8 KiB
//	stack; 2,000 half handshakes with a limit of 256 grew the heap by
//	3.3-3.6 MiB, the test's own client sockets included; 10,000 idle
//	connections (a third silent, a third sending only 0x16, a third half a
//	ClientHello) with the default limit of 1,024: heap +17 MiB, 24 MiB in
//	use at the peak, opened in 2.7 s, all closed 3.4 s after (a 3 s
//	deadline; TestTLSTenThousandIdleHandshakes). A new handshake beyond the
//	limit closes the oldest in progress instead of being refused, so TLS
//	clients (whose handshake takes a round trip or two) are served during
//	such a flood, as plaintext ones are
//
// TLS adds no allocation of ours per message (TestServerRoundTripTLSAllocBudget);
// without the read buffer the pipelined TLS server side was 43 µs/op (a
// syscall per few records).
//
// The client side reads each connection with one goroutine on a plain
// net.Conn and writes frames under a per-connection mutex; requests the
// peer sends (broker → client calls) go to ClientConfig.Router.
package transport
