// Command tracetail attributes a latency tail from a Go execution trace.
//
// Take a trace of a running broker (metricsPprofEnable=true serves
// /debug/pprof on the metrics port) while a load runs, then read it:
//
//	curl -o broker.trace 'http://127.0.0.1:5557/debug/pprof/trace?seconds=5'
//	go run ./bench/tracetail -top 20 broker.trace
//
// It prints, per goroutine entry function, how long goroutines sat
// runnable before a P ran them, and per call site how long system calls
// lasted; then the longest of each with their offsets into the trace, so
// stalls can be lined up with what the process was doing at that instant
// (e.g. every runnable goroutine waiting 15 ms at the moment two flushers
// entered fdatasync: see store/iolane). It has its own module so the
// server does not depend on golang.org/x/exp.
package main
