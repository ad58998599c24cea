// Package controllertest starts controller nodes for tests in other
// packages (broker, cmd/mqadmin, cmd/rocketgo): loopback port pairs (a
// controller's Raft transport listens on its remoting port + 1) and a
// single-node group that leads before the test goes on.
package controllertest
