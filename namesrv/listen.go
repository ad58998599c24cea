package namesrv

import (
	"log/slog"
	"net"
)

// allInterfaces reports whether addr ("host:port") is bound to every
// interface: an empty host, 0.0.0.0 or ::.
func allInterfaces(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// listenNotice is the start-up line: a warning when the name server
// listens on every interface (Java's default bindAddress=0.0.0.0, which we
// keep) with how to restrict it, else the bound address.
func listenNotice(addr string) (slog.Level, string) {
	if allInterfaces(addr) {
		return slog.LevelWarn, "namesrv: started, listening on all interfaces (Java's default); to restrict, set bindAddress to one interface's IP (e.g. bindAddress=127.0.0.1; in rocketgo: -namesrvListen 127.0.0.1:9876)"
	}
	return slog.LevelInfo, "namesrv: started"
}
