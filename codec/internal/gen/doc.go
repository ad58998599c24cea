// Command gen turns the declarative protocol spec in codec/internal/spec
// into Go source: codec/codes_gen.go (request/response codes) and
// codec/header/*_gen.go (typed custom headers).
//
//	go run ./codec/internal/gen          # rewrite generated files
//	go run ./codec/internal/gen -check   # exit 1 if any generated file is stale
//
// It locates the repository root by walking up from the working directory
// to the go.mod of module github.com/rocketgo/rocketgo.
package main
