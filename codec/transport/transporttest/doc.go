// Package transporttest has helpers for tests of servers built on
// transport: a heap watchdog that fails a test (and ends the attack)
// before a memory regression can exhaust the shared machine.
package transporttest
