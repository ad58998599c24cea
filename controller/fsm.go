package controller

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// fsm adapts State to hashicorp/raft. Each log entry holds one JSON event;
// the snapshot is the JSON document of State.marshal.
type fsm struct {
	state *State
}

// Apply applies one committed entry. A bad entry cannot come from our
// leader; it is reported as the entry's result and skipped on every node
// alike, so the replicas stay equal.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	e, err := decodeEvent(l.Data)
	if err != nil {
		return fmt.Errorf("controller: entry %d: %w", l.Index, err)
	}
	f.state.apply(&e)
	return nil
}

// Snapshot copies the state now (under its read lock); Persist writes it
// later, concurrently with Apply.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	b, err := f.state.marshal()
	if err != nil {
		return nil, fmt.Errorf("controller: snapshot: %w", err)
	}
	return snapshot(b), nil
}

// Restore replaces the state with a snapshot.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSnapshotBytes+1))
	if err != nil {
		return fmt.Errorf("controller: restore: %w", err)
	}
	if len(b) > maxSnapshotBytes {
		return fmt.Errorf("controller: restore: snapshot beyond %d bytes", maxSnapshotBytes)
	}
	return f.state.unmarshal(b)
}

// maxSnapshotBytes bounds a snapshot read back (the state is bounded by
// controllerMaxBrokerSets × controllerMaxBrokersPerSet, far below this).
const maxSnapshotBytes = 256 << 20

type snapshot []byte

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("controller: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s snapshot) Release() {}
