// Command goclient is a load generator for scripts/bench-compare.sh built on
// the official Apache RocketMQ Go client (github.com/apache/rocketmq-client-go/v2),
// so the comparison also measures the broker as a stock client drives it.
//
//	goclient produce -n 127.0.0.1:9876 -t Topic -threads 8 -size 1024 -duration 10s [-warmup 2s] [-rate 5000]
//	goclient consume -n 127.0.0.1:9876 -t Topic -g Group -count 200000 -duration 300s [-warmup 1s] [-idle 2s]
//
// The producer sends synchronously from N goroutines sharing one producer
// (closed loop, or paced to -rate messages/s over all goroutines); each body
// starts with mqbench's stamp ("RGBENCH1" + big-endian send time in unix
// nanoseconds), so any consumer can compute end-to-end latency. The consumer
// is a clustering push consumer of a new group reading from the first offset.
// Both print one JSON summary line on stdout with mqbench's -json field names.
//
// It lives in its own module so the root module's `go test ./...` and go.mod
// never see the client or its dependencies.
package main
