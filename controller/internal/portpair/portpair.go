package portpair

import (
	"math/rand/v2"
	"net"
	"strconv"
)

// Find returns n distinct ports p, each with p and p+1 free on 127.0.0.1,
// below 32768 (the ephemeral range's default start), or nil after many
// tries. The ports are held until all are found, so none repeats.
func Find(n int) []int {
	var out []int
	var hold []net.Listener
	defer func() {
		for _, l := range hold {
			l.Close()
		}
	}()
	for range 2000 {
		if len(out) == n {
			return out
		}
		p := 10002 + rand.IntN(22000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		if err != nil {
			l.Close()
			continue
		}
		hold = append(hold, l, l2)
		out = append(out, p)
	}
	return nil
}
