// Package falloc reserves disk blocks for files that the store writes
// through a shared mapping (commit-log and consume-queue segments, index
// files, the timer wheel and log). A store through a mapping into a hole
// of a sparse file allocates the block at page-fault time; on a full file
// system that fault cannot be answered with an error and the kernel kills
// the process with SIGBUS. Allocating first turns the same condition into
// an ENOSPC returned by a system call, which the store handles by turning
// read-only.
package falloc
