// Package smaps reads this process's /proc/self/smaps, so store tests can
// check how much of a mapping is resident.
package smaps
