package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
)

// FreePort returns a port that is free on 127.0.0.1 right now.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("harness: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreeBrokerPort returns a port P with P-2 (VIP channel), P and P+1 (HA)
// all free on every interface, which a Java broker needs, below the
// ephemeral port range.
func FreeBrokerPort() (int, error) {
	for range 200 {
		// Below the kernel's ephemeral range (32768 and up by default):
		// while a broker is down for a restart, an outgoing connection
		// could otherwise take its port, and a broker whose HA port is
		// taken refuses to start.
		p := 10002 + rand.IntN(22000)
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
