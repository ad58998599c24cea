// Package transport carries remoting frames over TCP: a gnet v2 server
// whose event loops only frame, decode, route and encode; a router that maps
// a request code to a handler and the worker pool it runs on; connections
// that accept replies in any order and send server-initiated requests; and a
// client with opaque correlation and one reused connection per address.
//
//	socket ─► OnTraffic (event loop)
//	            NextFrame: bad length ─► close this connection
//	            copy payload into a pooled Lease, Decode: error ─► close
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
//	    socket full: the rest queues ─► one loop task per burst ─► gnet's
//	                 outbound buffer ─► direct mode again once it is empty
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
// (no traffic either way for ServerConfig.IdleTimeout) are closed; a pool
// with SetMaxQueueWait refuses requests that waited too long, as the Java
// broker's fast failure does.
//
// The client side reads each connection with one goroutine on a plain
// net.Conn and writes frames under a per-connection mutex; requests the
// peer sends (broker → client calls) go to ClientConfig.Router.
package transport
