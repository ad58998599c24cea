package failover

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecodeOffsetMsgID(t *testing.T) {
	host, off, ok := decodeOffsetMsgID("0A4D001E00002A9F00000000000004D2")
	require.True(t, ok)
	require.Equal(t, "10.77.0.30:10911", host)
	require.Equal(t, int64(1234), off)
	_, _, ok = decodeOffsetMsgID("zz")
	require.False(t, ok)
}

// Two hosts in one epoch range is split brain; an acknowledged offset
// that holds another host's record is a stale ack; a missing key is lost;
// an old master's ack after the new master's first is a stale-window ack.
func TestCheck(t *testing.T) {
	t0 := time.Now()
	cache := EpochCache{EpochList: []EpochEntry{{Epoch: 1, StartOffset: 0, EndOffset: 100}, {Epoch: 2, StartOffset: 100, EndOffset: -1}}}
	a, b := "10.77.0.30:10911", "10.77.0.31:10911"
	stored := []Stored{{"k0", a, 0}, {"k1", a, 50}, {"k2", b, 100}, {"k3", b, 150}}
	acks := []Ack{
		{Key: "k0", OK: true, Host: a, PhyOffset: 0, Start: t0.Add(-time.Second), End: t0.Add(-time.Second)},
		{Key: "k2", OK: true, Host: b, PhyOffset: 100, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second)},
	}
	var r Result
	Check(&r, acks, nil, stored, cache, t0, a, b)
	require.Zero(t, r.Lost)
	require.False(t, r.SplitBrain())
	require.Equal(t, 2*time.Second, r.Recovery)

	acks = append(acks, Ack{Key: "kx", OK: true, Host: a, PhyOffset: 150, Start: t0.Add(3 * time.Second), End: t0.Add(3 * time.Second)})
	stored = append(stored, Stored{"k4", a, 160})
	r = Result{}
	Check(&r, acks, nil, stored, cache, t0, a, b)
	require.Equal(t, 1, r.Lost)
	require.Equal(t, 1, r.StaleAcks)
	require.Equal(t, []int{2}, r.SplitEpochs)
	require.Equal(t, 1, r.StaleWindowAcks) // kx: the old master took it after the new one took k2

	// A send to the new master started before the old master's last
	// answered ones but was answered only after the election (retried
	// while it was a slave): no two masters at once.
	acks = []Ack{
		{Key: "k0", OK: true, Host: a, PhyOffset: 0, Start: t0.Add(1500 * time.Millisecond), End: t0.Add(1600 * time.Millisecond)},
		{Key: "k2", OK: true, Host: b, PhyOffset: 100, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second)},
	}
	r = Result{}
	Check(&r, acks, nil, []Stored{{"k0", a, 0}, {"k2", b, 100}}, cache, t0, a, b)
	require.Zero(t, r.StaleWindowAcks)
	require.False(t, r.SplitBrain())
}

// Each client gets its own failover time (its first SEND_OK on the new
// master after the fault), acked/failed split; probes (Client raw, or an
// old caller's -probe- key) set neither; both clients' keys count for lost.
func TestCheckPerClient(t *testing.T) {
	t0 := time.Now()
	cache := EpochCache{EpochList: []EpochEntry{{Epoch: 1, StartOffset: 0, EndOffset: 100}, {Epoch: 2, StartOffset: 100, EndOffset: -1}}}
	a, b := "10.77.0.30:10911", "10.77.0.31:10911"
	stored := []Stored{{"r-go-0", a, 0}, {"r-java-0", a, 10}, {"r-probe-0", b, 100}, {"r-go-1", b, 110}, {"r-java-1", b, 120}}
	acks := []Ack{
		{Key: "r-go-0", Client: ClientGo, OK: true, Host: a, PhyOffset: 0, Start: t0.Add(-time.Second), End: t0.Add(-time.Second)},
		{Key: "r-java-0", Client: ClientJava, OK: true, Host: a, PhyOffset: 10, Start: t0.Add(-time.Second), End: t0.Add(-time.Second)},
		{Key: "r-java-x", Client: ClientJava, Status: "MQClientException: no route", Start: t0, End: t0.Add(time.Second)},
		{Key: "r-probe-0", Client: ClientRaw, OK: true, Host: b, PhyOffset: 100, Start: t0.Add(time.Second), End: t0.Add(time.Second)},
		{Key: "r-java-1", Client: ClientJava, OK: true, Host: b, PhyOffset: 120, Start: t0.Add(4 * time.Second), End: t0.Add(5 * time.Second)},
		{Key: "r-go-1", Client: ClientGo, OK: true, Host: b, PhyOffset: 110, Start: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second)},
	}
	var r Result
	Check(&r, acks, nil, stored, cache, t0, a, b)
	require.Zero(t, r.Lost)
	require.False(t, r.SplitBrain())
	require.Equal(t, 3*time.Second, r.Recovery)
	require.Equal(t, 5*time.Second, r.JavaRecovery)
	require.Equal(t, 5, r.Acked)
	require.Equal(t, 1, r.Failed)
	require.Equal(t, ClientCounts{Acked: 2, Undeliv: 5}, r.ByClient[ClientGo]) // no deliveries given: each consumer misses all 5
	require.Equal(t, ClientCounts{Acked: 2, Failed: 1, Undeliv: 5}, r.ByClient[ClientJava])
	require.Equal(t, ClientCounts{Acked: 1}, r.ByClient[ClientRaw])
	require.Equal(t, 10, r.Undeliv)

	// A Java ack that is not in the final log is lost like a Go one.
	acks = append(acks, Ack{Key: "r-java-2", Client: ClientJava, OK: true, Host: b, PhyOffset: 130, Start: t0.Add(6 * time.Second), End: t0.Add(6 * time.Second)})
	r = Result{}
	Check(&r, acks, nil, stored, cache, t0, a, b)
	require.Equal(t, 1, r.Lost)
	require.Equal(t, []string{"r-java-2@" + b + "/130"}, r.LostExamples)

	// Old callers: no Client is go, a -probe- key is a probe.
	r = Result{}
	Check(&r, []Ack{
		{Key: "k-probe-1", OK: true, Host: b, PhyOffset: 100, Start: t0.Add(time.Second), End: t0.Add(time.Second)},
		{Key: "k1", OK: true, Host: b, PhyOffset: 110, Start: t0.Add(2 * time.Second), End: t0.Add(2 * time.Second)},
	}, nil, nil, cache, t0, a, b)
	require.Equal(t, 2*time.Second, r.Recovery)
	require.Zero(t, r.JavaRecovery)
	require.Equal(t, 1, r.ByClient[ClientGo].Acked)
	require.Equal(t, 1, r.ByClient[ClientRaw].Acked)
}

// Duplicate and missing deliveries are per consumer: a key each of the two
// consumer groups got once is neither; twice to one consumer is a dup of
// that consumer; a key one consumer never got is undelivered there only.
func TestCheckDeliveriesPerConsumer(t *testing.T) {
	t0 := time.Now()
	a := "10.77.0.30:10911"
	stored := []Stored{{"r-go-0", a, 0}, {"r-java-0", a, 10}}
	acks := []Ack{
		{Key: "r-go-0", Client: ClientGo, OK: true, Host: a, PhyOffset: 0, Start: t0, End: t0},
		{Key: "r-java-0", Client: ClientJava, OK: true, Host: a, PhyOffset: 10, Start: t0, End: t0},
	}
	got := []Delivery{
		{Key: "r-go-0", Client: ClientGo}, {Key: "r-java-0", Client: ClientGo},
		{Key: "r-go-0", Client: ClientJava}, {Key: "r-go-0", Client: ClientJava},
	}
	var r Result
	Check(&r, acks, got, stored, EpochCache{}, t0, a, "")
	require.Equal(t, ClientCounts{Acked: 1}, r.ByClient[ClientGo])
	require.Equal(t, ClientCounts{Acked: 1, DupDeliv: 1, Undeliv: 1}, r.ByClient[ClientJava])
	require.Equal(t, 1, r.DupDeliv)
	require.Equal(t, 1, r.Undeliv)
}

// The table splits counts by client and marks a run without a Java or
// gRPC load.
func TestTablePerClient(t *testing.T) {
	r := Result{Set: "ours", Fault: "kill9-master", Acked: 7, Recovery: 1500 * time.Millisecond, JavaRecovery: 2 * time.Second,
		GRPCRecovery: 700 * time.Millisecond,
		ByClient: map[string]ClientCounts{ClientGo: {Acked: 3, Failed: 1, Undeliv: 2}, ClientJava: {Acked: 4, DupDeliv: 1},
			ClientGRPC: {Acked: 6, Failed: 2}, ClientRaw: {Acked: 0, Failed: 5}}}
	tab := Table([]Result{r})
	require.Contains(t, tab, "| acked go/java/grpc/raw | failed sends go/java/grpc/raw |")
	require.Contains(t, tab, "| failover (Go client) | failover (Java client) | failover (gRPC client) |")
	require.Contains(t, tab, "| 3/4/6/0 | 1/0/2/5 | 0 | 0 | 0/1/0 | 2/0/0 | — | 1.5s | 2s | 700ms | no |")

	r.ByClient = map[string]ClientCounts{ClientGo: {Acked: 3}}
	require.Contains(t, Table([]Result{r}), "| 3/—/—/0 | 0/—/—/0 | 0 | 0 | 0/—/— | 0/—/— | — | 1.5s | no Java load | no gRPC load | no |")
	// A run that ended before Check: no counts at all.
	require.Contains(t, Table([]Result{{Set: "ours", Fault: "x", Err: "not ready"}}), "| 0/—/—/0 | 0/—/—/0 | 0 | 0 | 0/—/— | 0/—/— | — | — | — | — | no |")
}

// gRPC acks (no store host in a receipt) are placed by their key's first
// record in the final log, count toward the gRPC client's recovery on
// the new master, and a gRPC ack whose key is not stored is lost.
func TestCheckPlacesGRPCAcks(t *testing.T) {
	fault := time.Unix(1000, 0)
	acks := []Ack{
		{Key: "k-grpc-0", Client: ClientGRPC, Start: fault.Add(-time.Second), End: fault.Add(-time.Second), OK: true},
		{Key: "k-grpc-1", Client: ClientGRPC, Start: fault.Add(100 * time.Millisecond), End: fault.Add(900 * time.Millisecond), OK: true},
		{Key: "k-grpc-2", Client: ClientGRPC, Start: fault.Add(200 * time.Millisecond), End: fault.Add(300 * time.Millisecond), OK: false, Status: "timeout"},
		{Key: "k-grpc-3", Client: ClientGRPC, Start: fault.Add(-time.Second), End: fault.Add(-time.Second), OK: true},
	}
	stored := []Stored{{Key: "k-grpc-0", Host: "old:1", PhyOffset: 0}, {Key: "k-grpc-1", Host: "new:1", PhyOffset: 100}, {Key: "k-grpc-1", Host: "new:1", PhyOffset: 200}}
	got := []Delivery{{Key: "k-grpc-0", Client: ClientGRPC}, {Key: "k-grpc-1", Client: ClientGRPC}, {Key: "k-grpc-1", Client: ClientGRPC}}
	var r Result
	Check(&r, acks, got, stored, EpochCache{EpochList: []EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 2, StartOffset: 100}}}, fault, "old:1", "new:1")
	require.Equal(t, "new:1", acks[1].Host)
	require.Equal(t, int64(100), acks[1].PhyOffset)
	require.Equal(t, 900*time.Millisecond, r.GRPCRecovery)
	require.Equal(t, 1, r.Lost, "k-grpc-3 acknowledged and absent")
	require.Equal(t, ClientCounts{Acked: 3, Failed: 1, DupDeliv: 1}, r.ByClient[ClientGRPC])
	require.Equal(t, 1, r.DupStore)
	require.False(t, r.SplitBrain(), "%+v", r)
}
