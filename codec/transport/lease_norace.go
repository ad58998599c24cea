//go:build !race

package transport

// strictLeases: see Lease.recycle. Off in ordinary builds, which pool
// leases.
const strictLeases = false
