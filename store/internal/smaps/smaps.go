package smaps

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// MappedRSS returns the resident bytes of the mapping that starts at
// data[0].
func MappedRSS(data []byte) (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("smaps: %w", err)
	}
	defer f.Close()
	want := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(data))))
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			lo, _, _ := strings.Cut(rng, "-")
			start, err := strconv.ParseUint(lo, 16, 64)
			in = err == nil && start == want
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("smaps: Rss of %#x: %w", want, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("smaps: %w", err)
	}
	return 0, fmt.Errorf("smaps: no mapping at %#x", want)
}
