//go:build race

package transport

// strictLeases: see Lease.recycle. On in race-detector builds.
const strictLeases = true
