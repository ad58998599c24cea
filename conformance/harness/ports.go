package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// portRange is CONFORMANCE_PORTS ("lo-hi"): when set, every port the
// harness hands out lies in it (several runs share one machine, each in a
// range of its own); ok is false when unset or malformed.
func portRange() (lo, hi int, ok bool) {
	a, b, found := strings.Cut(os.Getenv("CONFORMANCE_PORTS"), "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 3 || hi-lo < 8 || hi > 65534 {
		return 0, 0, false
	}
	return lo, hi, true
}

// FreePort returns a port that is free on 127.0.0.1 right now.
func FreePort() (int, error) {
	if lo, hi, ok := portRange(); ok {
		for range 200 {
			p := lo + rand.IntN(hi-lo+1)
			if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
				_ = ln.Close()
				return p, nil
			}
		}
		return 0, fmt.Errorf("harness: no free port in CONFORMANCE_PORTS %d-%d", lo, hi)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("harness: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreeBrokerPort returns a port P with P-2 (VIP channel), P and P+1 (HA)
// all free on every interface, which a Java broker needs, below the
// ephemeral port range (or inside CONFORMANCE_PORTS).
func FreeBrokerPort() (int, error) {
	base, span := 10002, 22000
	if lo, hi, ok := portRange(); ok {
		base, span = lo+2, hi-lo-2
	}
	for range 200 {
		// Below the kernel's ephemeral range (32768 and up by default):
		// while a broker is down for a restart, an outgoing connection
		// could otherwise take its port, and a broker whose HA port is
		// taken refuses to start.
		p := base + rand.IntN(span)
		ok := true
		for _, q := range []int{p - 2, p, p + 1} {
			ln, err := net.Listen("tcp", fmt.Sprintf(":%d", q))
			if err != nil {
				ok = false
				break
			}
			_ = ln.Close()
		}
		if ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("harness: no free broker port triple found")
}
