// Package transport carries remoting frames over TCP: a gnet v2 server
// whose event loops only decode and encode, a router that maps a request
// code to a handler and the worker pool it runs on, connections that accept
// replies in any order and server-initiated requests, and a client with
// opaque correlation and connection reuse.
package transport
