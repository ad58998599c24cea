//go:build tools

// Package rocketgo pins the module's direct dependencies before every
// package that uses them exists.
package rocketgo

import (
	_ "github.com/json-iterator/go"
	_ "github.com/panjf2000/gnet/v2"
	_ "golang.org/x/sys/unix"
)
