// Package javadriver builds the Maven driver in conformance/java once per
// client profile and runs many scenarios in one JVM, parsing its
//
//	PASS <name> <seconds>
//	FAIL <name> <seconds>: <reason>
//
// lines into scenario results.
package javadriver
