package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The disk ratio the cleaner compares with diskMaxUsedSpaceRatio and
// diskSpaceCleanForciblyRatio is Java's getDiskPartitionSpaceUsedPercent:
// used / (used + available), rounded up; reserved blocks count on neither side.
func TestUsedPercentAsJava(t *testing.T) {
	for _, c := range []struct {
		blocks, bfree, bavail uint64
		want                  float64
	}{
		{100, 30, 25, 74},   // 70 used of 95 usable: 73.7 → 74 (all blocks: 75)
		{100, 100, 100, 0},  // empty
		{100, 0, 0, 100},    // full
		{1000, 700, 60, 84}, // large reserve: 300 used of 360 = 83.3 → 84 (all blocks: 94)
		{0, 0, 0, 0},        // no blocks reported
	} {
		require.Equal(t, c.want, javaUsedPercent(c.blocks, c.bfree, c.bavail), "%+v", c)
	}
}
