// Package iolane keeps a Go process's blocking disk system calls from
// stalling its request goroutines.
//
// A goroutine in a system call keeps its P (the scheduler's right to run Go
// code) in the syscall state until it returns or the runtime's monitor
// (sysmon) takes the P away. sysmon backs off to a 10 ms sleep while the
// process is quiet and takes a P only after seeing it in the same call on
// two of its rounds, so a P can stay stuck 10-20 ms. fdatasync, msync and
// madvise(MADV_POPULATE_READ) of a store routinely last that long. With
// GOMAXPROCS equal to the core count (2 here), two such calls at once — the
// commit-log flush and a consume-queue flush, both due on the same 500 ms
// tick — leave no P for anyone: every send, pull and reply waits for the
// disk although it does no I/O (measured with bench/tracetail on a Go
// execution trace: runnable goroutines waited 11-18 ms, each time at the
// instant the flushers entered fdatasync).
//
// The cure has two halves, used together:
//
//   - A Lane serialises the background disk calls (consume-queue and
//     index syncs, checkpoint fsyncs, prefaulting and releasing mappings),
//     so at most one of them holds a P at any time; the commit-log flusher,
//     a single goroutine, is the other.
//   - Reserve raises GOMAXPROCS by the number of such goroutines (Lanes),
//     so the Ps they can hold come on top of one per core.
//
// Request goroutines then always find a P. The extra Ps cost nothing while
// unused: the OS threads behind them sleep in the kernel.
package iolane
