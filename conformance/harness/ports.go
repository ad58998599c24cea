package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// portRange is CONFORMANCE_PORT_RANGE ("lo-hi", inclusive): when set, every
// port the harness hands out is taken from it, so runs sharing a machine
// can keep to ranges of their own. ok is false when it is unset or bad.
func portRange() (lo, hi int, ok bool) {
	a, b, found := strings.Cut(os.Getenv("CONFORMANCE_PORT_RANGE"), "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 1024 || hi > 65535 || hi-lo < 16 {
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
		return 0, fmt.Errorf("harness: no free port in CONFORMANCE_PORT_RANGE")
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
// ephemeral port range (or inside CONFORMANCE_PORT_RANGE).
func FreeBrokerPort() (int, error) {
	// Below the kernel's ephemeral range (32768 and up by default): while
	// a broker is down for a restart, an outgoing connection could
	// otherwise take its port, and a broker whose HA port is taken
	// refuses to start.
	lo, hi := 10002, 32001
	if l, h, ok := portRange(); ok {
		lo, hi = l+2, h-1
	}
	for range 200 {
		p := lo + rand.IntN(hi-lo+1)
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
