// Package tlsconf turns Java RocketMQ's tls.* settings into crypto/tls
// configurations, so every listener and dialer of a server (remoting
// ports, and opt-in the HA and Raft ports) is built from one place.
//
// In Java the keys are JVM system properties (-Dtls.server.mode=...), read
// once by TlsSystemConfig; TlsHelper then lets the properties file named by
// tls.config.file (default /etc/rocketmq/tls.properties; a missing file is
// no error) override all of them except tls.server.mode, tls.enable and
// tls.config.file itself. Load does the same with the keys it is given
// (the cmds take them from their -c properties file).
//
//	key                           default      meaning
//	tls.server.mode               permissive   disabled | permissive | enforcing
//	tls.enable                    false        outbound remoting clients dial TLS
//	tls.config.file               /etc/rocketmq/tls.properties
//	tls.test.mode.enable          true         self-signed server certificate made in
//	                                           memory (ECDSA P-256); clients trust anything
//	tls.server.certPath, tls.server.keyPath    PEM certificate chain and key
//	tls.server.keyPassword                     only unencrypted keys are supported
//	tls.server.need.client.auth   none         none | optional | require
//	tls.server.authClient         false        verify client certificates against
//	tls.server.trustCertPath                   these PEM roots (system roots if empty)
//	tls.client.certPath, tls.client.keyPath, tls.client.keyPassword
//	tls.client.authServer         false        verify the server against
//	tls.client.trustCertPath                   these PEM roots (system roots if empty)
//
// Our own keys (Java never uses TLS there; off by default):
//
//	rocketgo.tls.ha.enable        false        classic HA port and its slave dial TLS
//	rocketgo.tls.raft.enable      false        the controller's Raft transport
//
// Like Java, an unknown tls.server.mode means permissive and an unknown
// need.client.auth means none.
package tlsconf
