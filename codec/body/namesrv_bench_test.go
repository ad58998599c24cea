package body

import (
	"fmt"
	"testing"
)

func bigRegisterBody(n int) []byte {
	b := RegisterBrokerBody{DataVersion: TopicVersion{Counter: 1, Timestamp: 1}, FilterServerList: []string{}}
	for i := range n {
		tc := NewTopicConfig(fmt.Sprintf("BigTopic-%05d", i))
		tc.Attributes = map[string]string{}
		b.Topics = append(b.Topics, tc)
	}
	return AppendRegisterBrokerBody(nil, &b)
}

func BenchmarkDecodeRegisterBrokerBody10k(b *testing.B) {
	raw := bigRegisterBody(10000)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRegisterBrokerBody(raw, false, 479); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendTopicRouteData(b *testing.B) {
	r := sampleRoute()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTopicRouteData(buf[:0], &r, true)
	}
	b.SetBytes(int64(len(buf)))
}

func TestAppendTopicRouteDataNoAllocs(t *testing.T) {
	r := sampleRoute()
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = AppendTopicRouteData(buf[:0], &r, false) }); n != 0 {
		t.Fatalf("AppendTopicRouteData allocates %v times", n)
	}
}
