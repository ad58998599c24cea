package main

import (
	"log/slog"
	"net"
)

// brokerListenNotice is the start-up line about the embedded broker's
// bound addresses (the name server logs its own): a warning when any is
// every interface, with how to restrict it, else the addresses.
func brokerListenNotice(addrs ...string) (slog.Level, string) {
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			return slog.LevelWarn, "rocketgo: broker listening on all interfaces; to restrict, pass -brokerListen with one interface's IP (e.g. -brokerListen 127.0.0.1:10911) or set bindAddress (or listenIP) in the -c broker.conf"
		}
	}
	return slog.LevelInfo, "rocketgo: broker listening"
}
