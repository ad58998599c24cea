package header

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseDecimalMatchesStrconv checks the fast parser against
// strconv.ParseInt on random strings around the interesting edges.
func TestParseDecimalMatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	const alphabet = "+-0123456789 a_"
	edges := []string{"", "+", "-", "0", "-0", "+0", "00000000000000000000000042",
		"2147483647", "2147483648", "-2147483648", "-2147483649",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "99999999999999999999", "1_0", "0x1", "--1", "+-1", "١"}
	check := func(s string) {
		for _, bits := range []int{32, 64} {
			pos, neg := uint64(1)<<(bits-1)-1, uint64(1)<<(bits-1)
			got, ok := parseDecimal(s, pos, neg)
			want, err := strconv.ParseInt(s, 10, bits)
			require.Equal(t, err == nil, ok, "%q bits %d", s, bits)
			if ok {
				require.Equal(t, want, got, "%q bits %d", s, bits)
			}
		}
	}
	for _, s := range edges {
		check(s)
	}
	for range 50000 {
		b := make([]byte, rng.IntN(22))
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = '0' + byte(rng.IntN(10))
			}
		}
		check(string(b))
	}
}
