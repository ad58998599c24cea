package main

import (
	"log/slog"
	"net"
)

// listenNotice is the start-up line about the broker's bound addresses: a
// warning when any of them is every interface (Java's default, kept: an
// empty bindAddress and listenIP) with how to restrict it, else the addresses.
func listenNotice(addrs ...string) (slog.Level, string) {
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			return slog.LevelWarn, "mqbroker: listening on all interfaces (Java's default); to restrict, set bindAddress (Java's key) or listenIP in broker.conf to one interface's IP (e.g. bindAddress=127.0.0.1 or listenIP=127.0.0.1; bindAddress wins)"
		}
	}
	return slog.LevelInfo, "mqbroker: listening"
}

// boundAddrs lists the main and, when served, the fast (VIP) address.
func boundAddrs(main, fast string) []string {
	if fast == "" {
		return []string{main}
	}
	return []string{main, fast}
}
