// Package portpair finds free loopback port pairs (a controller's remoting
// and Raft ports, a broker's main and HA ports) for tests, below the
// kernel's ephemeral range so that a node a test restarts finds its ports
// still free. It has no dependencies of its own, so both the controller's
// internal tests and controllertest use it.
package portpair
