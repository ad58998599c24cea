//go:build !race

package broker

// strictOwnership: see strict_race.go. Off in ordinary builds, where a
// second free is logged and ignored and requests are pooled.
const strictOwnership = false
