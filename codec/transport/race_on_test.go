//go:build race

package transport

// raceEnabled: the race detector makes sync.Pool drop items on purpose, so
// allocation budgets do not hold under it.
const raceEnabled = true
