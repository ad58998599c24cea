//go:build race

package auth

// raceEnabled: the race detector makes sync.Pool drop items, so
// allocation budgets are not checked.
const raceEnabled = true
