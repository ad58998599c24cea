// Package proxyprototest builds PROXY protocol v2 headers for tests of
// the parser (codec/proxyproto) and of the servers that detect them
// (codec/transport, proxy/grpcsvc).
package proxyprototest
