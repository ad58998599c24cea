package smaps

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestMappedRSS(t *testing.T) {
	const size = 16 << 20
	data, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	defer unix.Munmap(data)
	for i := 0; i < 4<<20; i += 4096 {
		data[i] = 1
	}
	rss, err := MappedRSS(data)
	require.NoError(t, err)
	require.GreaterOrEqual(t, rss, int64(4<<20))
	require.Less(t, rss, int64(size))
	_, err = MappedRSS(make([]byte, 1))
	require.Error(t, err)
}
