// Package conformance runs the scenario table (package scenario) with every
// official client against every server combination and reports a matrix.
//
//	make -C conformance test    Go + Java clients against our server
//	make -C conformance matrix  every client × {ours, java, javans-ours, oursns-java} → MATRIX.md
//	make -C conformance golden  re-record codec/testdata/golden through the capture proxy
//
// It is its own Go module (nothing in rocketgo imports it) so the official Go
// client and its dependencies stay out of the server's module graph.
package conformance
