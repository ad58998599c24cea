package failover

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// FailoverTool's ACK/ERR lines become Java acks with the store host and
// commit-log offset of offsetMsgId and the tool's wall-clock times; MSG
// lines become Java deliveries; other lines are not records.
func TestParseJavaLines(t *testing.T) {
	a, ok := parseJavaAck("ACK r-java-7 1764600000000001 1764600000250002 SEND_OK 0A4D001E00002A9F00000000000004D2")
	require.True(t, ok)
	require.Equal(t, Ack{Key: "r-java-7", Client: ClientJava, OK: true, Status: "SEND_OK", Host: "10.77.0.30:10911", PhyOffset: 1234,
		Start: time.UnixMicro(1764600000000001), End: time.UnixMicro(1764600000250002)}, a)

	a, ok = parseJavaAck("ACK r-java-8 1 2 FLUSH_SLAVE_TIMEOUT 0A4D001E00002A9F00000000000004D2")
	require.True(t, ok)
	require.False(t, a.OK)
	require.Equal(t, "FLUSH_SLAVE_TIMEOUT", a.Status)

	a, ok = parseJavaAck("ERR r-java-9 10 20 MQClientException Send [3] times, still failed <- RemotingConnectException: x")
	require.True(t, ok)
	require.Equal(t, Ack{Key: "r-java-9", Client: ClientJava, Status: "MQClientException: Send [3] times, still failed <- RemotingConnectException: x",
		Start: time.UnixMicro(10), End: time.UnixMicro(20)}, a)

	for _, bad := range []string{"READY", "SENT acked=1 failed=0", "ACK r-java-1 x 2 SEND_OK id", "ACK r-java-1 1 2 SEND_OK", "MSG r 10.77.0.30:10911 5 0 1"} {
		_, ok := parseJavaAck(bad)
		require.False(t, ok, bad)
	}

	g, ok := parseJavaMsg("MSG r-go-3 10.77.0.31:10911 4096 2 17")
	require.True(t, ok)
	require.Equal(t, Delivery{Key: "r-go-3", Client: ClientJava, Host: "10.77.0.31:10911", PhyOffset: 4096}, g)
	for _, bad := range []string{"MSG r-go-3 10.77.0.31:10911 x 2 17", "MSG r-go-3 h 1 2", "ACK r 1 2 SEND_OK id"} {
		_, ok := parseJavaMsg(bad)
		require.False(t, ok, bad)
	}
}

// A phase waiting for AckedOnEach waits for the slower client; without a
// Java load only the Go client counts. DeliveredEach wants every key at
// every consumer.
func TestAckedOnEachAndDeliveredEach(t *testing.T) {
	t0 := time.Now()
	h := "10.77.0.31:10911"
	l := &Load{}
	for i := range 3 {
		l.Add(Ack{Key: "g", Client: ClientGo, OK: true, Host: h, Start: t0.Add(time.Duration(i+1) * time.Second)})
	}
	l.Add(Ack{Key: "p", Client: ClientRaw, OK: true, Host: h, Start: t0.Add(time.Second)})
	l.Add(Ack{Key: "j", Client: ClientJava, OK: true, Host: "10.77.0.30:10911", Start: t0.Add(time.Second)})
	require.Equal(t, 3, l.AckedOnEach(h, t0))
	l.java = &javaLoad{} // a Java load is running
	require.Equal(t, 0, l.AckedOnEach(h, t0))
	require.Equal(t, 1, l.AckedOnEach("", t0))
	l.Add(Ack{Key: "j2", Client: ClientJava, OK: true, Host: h, Start: t0.Add(time.Second)})
	require.Equal(t, 1, l.AckedOnEach(h, t0))
	require.Equal(t, 0, l.AckedOnEach(h, t0.Add(2*time.Second)))

	keys := map[string]bool{"a": true, "b": true}
	l.addDelivery(Delivery{Key: "a", Client: ClientGo})
	l.addDelivery(Delivery{Key: "b", Client: ClientGo})
	l.addDelivery(Delivery{Key: "a", Client: ClientJava})
	require.False(t, l.DeliveredEach(keys))
	l.addDelivery(Delivery{Key: "b", Client: ClientJava})
	require.True(t, l.DeliveredEach(keys))
}

// The classes count as stale when FailoverTool.class is missing or older
// than a source file; a newer pom does not count.
func TestJavaClassesStale(t *testing.T) {
	proj := t.TempDir()
	src := filepath.Join(proj, "src", "main", "java", "io", "rocketgo", "conformance")
	cls := filepath.Join(proj, "target", "client-5", "classes")
	clsFile := filepath.Join(cls, "io", "rocketgo", "conformance", "FailoverTool.class")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(clsFile), 0o755))
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{filepath.Join(proj, "pom.xml"), filepath.Join(src, "FailoverTool.java"), filepath.Join(src, "HaTool.java")} {
		require.NoError(t, os.WriteFile(f, nil, 0o644))
		require.NoError(t, os.Chtimes(f, old, old))
	}
	require.True(t, javaClassesStale(proj, cls))
	require.NoError(t, os.WriteFile(clsFile, nil, 0o644))
	require.False(t, javaClassesStale(proj, cls))
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(proj, "pom.xml"), later, later))
	require.False(t, javaClassesStale(proj, cls))
	require.NoError(t, os.Chtimes(filepath.Join(src, "HaTool.java"), later, later))
	require.True(t, javaClassesStale(proj, cls))
}

// Both clients' loads against our name server + broker on 127.0.0.1 (no
// namespaces, no root): every Java send is recorded with the store host
// and commit-log offset the broker really wrote that key at, keys are
// unique across the clients, each consumer gets every key, StopSending
// ends the Java senders (no ack starts after it) and Close ends the JVM.
func TestLoadBothClients(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl, err := harness.Start(ctx, env, harness.Ours, harness.Options{Dir: t.TempDir()})
	if errors.Is(err, harness.ErrNotBuilt) {
		t.Skip("bin/rocketgo not built (make build)")
	}
	require.NoError(t, err)
	defer cl.Close()
	topic := "foload_t"
	require.NoError(t, cl.CreateTopic(ctx, topic, 4, nil))

	const count = 5000 // more than the test lets them send: StopSending ends them
	l, err := StartLoad(cl.NamesrvAddr, topic, "foload", count, 2, 10*time.Millisecond, "")
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			l.Close()
		}
	}()
	require.NotNil(t, l.java, l.NoJava())
	require.Equal(t, []string{ClientGo, ClientJava}, l.Senders())
	require.Eventually(t, func() bool { return l.AckedOnEach(cl.BrokerAddr, time.Time{}) >= 40 }, 60*time.Second, 50*time.Millisecond)
	l.StopSending()
	stop := time.Now()
	acks := l.Acks()
	perClient := map[string]int{}
	ok := map[string]bool{}
	for _, a := range acks {
		require.True(t, a.OK, "%+v", a)
		require.False(t, ok[a.Key], "key %s twice", a.Key)
		ok[a.Key] = true
		perClient[a.Client]++
		require.True(t, strings.HasPrefix(a.Key, "foload-"+a.Client+"-"), a.Key)
		require.False(t, a.End.Before(a.Start), "%+v", a)
		require.False(t, a.Start.After(stop), "%+v after StopSending", a)
		require.WithinDuration(t, stop, a.Start, 2*time.Minute)
	}
	require.Less(t, perClient[ClientJava], count)
	require.Eventually(t, func() bool { return l.DeliveredEach(ok) }, 60*time.Second, 100*time.Millisecond)

	stored, err := ReadAll(ctx, cl.BrokerAddr, topic, "foload_check", 4)
	require.NoError(t, err)
	require.Len(t, stored, len(acks))
	at := map[string]Stored{}
	for _, s := range stored {
		at[s.Key] = s
	}
	for _, a := range acks {
		require.Equal(t, Stored{Key: a.Key, Host: a.Host, PhyOffset: a.PhyOffset}, at[a.Key], "%s client", a.Client)
	}
	for _, g := range l.Deliveries() {
		require.Equal(t, Stored{Key: g.Key, Host: g.Host, PhyOffset: g.PhyOffset}, at[g.Key], "%s consumer", g.Client)
	}

	j := l.java
	l.Close()
	closed = true
	select {
	case <-j.done:
	default:
		t.Fatal("JVM still running after Close")
	}
	require.Len(t, l.Acks(), len(acks), "a send after StopSending")
	require.Empty(t, l.Err())
}
