package goclient

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEarliestTimerDelivery(t *testing.T) {
	// Rounded down to the 1 s tick; a time on a tick fires one tick earlier.
	require.Equal(t, int64(1_700_000_003_000), earliestTimerDelivery(1_700_000_003_456))
	require.Equal(t, int64(1_700_000_002_000), earliestTimerDelivery(1_700_000_003_000))
	require.Equal(t, int64(1_700_000_003_000), earliestTimerDelivery(1_700_000_003_999))
}

func TestSettled(t *testing.T) {
	two := []string{"m1", "m2"}
	round := map[int][]string{}
	for q := range rebalanceQueues {
		round[q] = []string{two[q%2]}
	}
	ok, why := settled(round, two)
	require.True(t, ok, why)

	// A queue consumed twice (old and new owner both pulling) is not settled.
	round[3] = []string{"m1", "m2"}
	ok, why = settled(round, two)
	require.False(t, ok)
	require.Contains(t, why, "queue 3")

	// A departed member still consuming is not settled.
	round[3] = []string{"m2"}
	ok, why = settled(round, []string{"m2", "m3"})
	require.False(t, ok)
	require.Contains(t, why, "departed m1")

	// Every queue on one of two live members is unbalanced.
	for q := range rebalanceQueues {
		round[q] = []string{"m2"}
	}
	ok, why = settled(round, two)
	require.False(t, ok)
	require.Contains(t, why, "unbalanced")

	// Three members: 3/3/2 is the averaging spread.
	three := []string{"m1", "m2", "m3"}
	for q := range rebalanceQueues {
		round[q] = []string{three[q*3/rebalanceQueues]}
	}
	ok, why = settled(round, three)
	require.True(t, ok, why)
}
