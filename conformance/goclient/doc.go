// Package goclient runs the conformance scenarios with the official Go
// client, github.com/apache/rocketmq-client-go/v2, plus raw frames for the
// bad-input scenario. Every scenario uses its own topics, groups and client
// instance names (Target.Prefix), so one server serves a whole run.
package goclient
