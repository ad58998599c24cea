package broker

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// onPut, onGet and onGetLatency run per send and per pull: once a key's entry exists
// (published or still pending) they allocate nothing, whatever buffer the
// caller's names point into.
func TestStatsHotPathAllocs(t *testing.T) {
	s := newStatsAt(statsT0, nil)
	topic, group := string([]byte("AllocT")), string([]byte("AllocG"))
	sysTopic := string([]byte("rmq_sys_alloc"))
	r := putOK(1, 256)
	s.onPut(topic, r)
	s.onPut(sysTopic, r)
	s.onGet(group, topic, 32, 8192)
	s.onGetLatency(group, topic, 3, 1)
	pending := testing.AllocsPerRun(1000, func() {
		s.onPut(topic, r)
		s.onPut(sysTopic, r)
		s.onGet(group, topic, 32, 8192)
		s.onGetLatency(group, topic, 3, 1)
	})
	require.Zero(t, pending, "keys not yet published")
	s.until(0)
	published := testing.AllocsPerRun(1000, func() {
		s.onPut(topic, r)
		s.onPut(sysTopic, r)
		s.onGet(group, topic, 32, 8192)
		s.onGetLatency(group, topic, 3, 1)
	})
	require.Zero(t, published)
}

func BenchmarkStatsOnPut(b *testing.B) {
	s := newStatsAt(statsT0, nil)
	topic := string([]byte("BenchT"))
	r := putOK(1, 1024)
	s.onPut(topic, r)
	s.until(0)
	b.ReportAllocs()
	b.SetBytes(int64(r.WroteBytes))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.onPut(topic, r)
		}
	})
}

func BenchmarkStatsOnGet(b *testing.B) {
	s := newStatsAt(statsT0, nil)
	topic, group := string([]byte("BenchT")), string([]byte("BenchG"))
	s.onGet(group, topic, 32, 32*1024)
	s.until(0)
	b.ReportAllocs()
	b.SetBytes(32 * 1024)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.onGet(group, topic, 32, 32*1024)
		}
	})
}
