//go:build tools

// Package rocketgo pins the module's direct dependencies before every
// package that uses them exists, and the code generators' versions:
// scripts/gen-proto.sh builds protoc-gen-go and protoc-gen-go-grpc from the
// versions go.mod holds for these imports.
package rocketgo

import (
	_ "github.com/json-iterator/go"
	_ "github.com/panjf2000/gnet/v2"
	_ "golang.org/x/sys/unix"
	_ "google.golang.org/grpc/cmd/protoc-gen-go-grpc"
	_ "google.golang.org/protobuf/cmd/protoc-gen-go"
)
