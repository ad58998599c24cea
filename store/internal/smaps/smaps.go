package smaps

import (
	"bufio"
	"fmt"
	"os"
	"slices"
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

// RandomRead reports whether the mapping holding p is advised
// MADV_RANDOM (VmFlags "rr": no readahead on its faults).
func RandomRead(p *byte) (bool, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return false, fmt.Errorf("smaps: %w", err)
	}
	defer f.Close()
	want := uint64(uintptr(unsafe.Pointer(p)))
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			lo, hi, _ := strings.Cut(rng, "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && start <= want && want < end
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return slices.Contains(strings.Fields(line)[1:], "rr"), nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("smaps: %w", err)
	}
	return false, fmt.Errorf("smaps: no mapping holds %#x", want)
}
