// Package scenario is the single table of conformance scenarios shared by the
// Go driver (package goclient) and the Java driver (conformance/java), the
// not-yet ledger for our server, and the result vocabulary of the matrix.
package scenario
