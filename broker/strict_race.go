//go:build race

package broker

// strictOwnership turns a broken ownership rule of a pooled request (a
// second free) into a panic and stops reusing freed requests, so tests run
// with -race catch a late touch or a double free where it happens.
const strictOwnership = true
