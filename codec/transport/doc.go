// Package transport carries remoting frames over TCP: a gnet v2 server
// whose event loops only frame, decode, route and encode; a router that maps
// a request code to a handler and the worker pool it runs on; connections
// that accept replies in any order and send server-initiated requests; and a
// client with opaque correlation and one reused connection per address.
//
//	socket ─► OnTraffic (event loop)
//	            NextFrame: bad length ─► close this connection
//	            copy payload, Decode: error ─► close
//	            response flag? ─► complete the Conn.Invoke waiting on its opaque
//	            Router: no route ─► REQUEST_CODE_NOT_SUPPORTED
//	                    inline   ─► handler on the loop, reply batched per read
//	                    pool     ─► bounded queue (full ─► SYSTEM_BUSY)
//	                                 └► worker: handler ─► Conn.Write
//	Conn.Write (any goroutine) ─► encode into a pooled buffer ─► per-connection
//	    queue ─► one loop task per burst ─► writev ─► buffers back to the pool
//
// Ownership: a request Frame and its payload belong to the handler and may
// be kept. A handler returns its response (the transport sets opaque,
// response flag and version) or nil and replies later with Conn.Write.
// Oneway requests never get a reply, not even an error. A handler panic is
// answered SYSTEM_ERROR and the connection stays open.
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
