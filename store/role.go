package store

import (
	"errors"
	"fmt"
)

// Role is Java's BrokerRole as the store sees it: a master takes local
// puts (SYNC_MASTER puts also wait for replication, flush.go policy); a
// slave is read-only for puts and takes bytes from its master (AppendRaw).
type Role int32

// Roles.
const (
	AsyncMaster Role = iota
	SyncMaster
	Slave
)

func (r Role) String() string {
	switch r {
	case SyncMaster:
		return "SYNC_MASTER"
	case Slave:
		return "SLAVE"
	}
	return "ASYNC_MASTER"
}

// ParseRole reads Java's brokerRole value.
func ParseRole(v string) (Role, error) {
	switch v {
	case "ASYNC_MASTER":
		return AsyncMaster, nil
	case "SYNC_MASTER":
		return SyncMaster, nil
	case "SLAVE":
		return Slave, nil
	}
	return 0, fmt.Errorf("store: unknown broker role %q", v)
}

// Errors of the replication API.
var (
	// ErrSlave refuses a local put on a slave (Java: SERVICE_NOT_AVAILABLE,
	// "messages are put to the slave").
	ErrSlave = errors.New("store: read-only: this store is a slave")
	// ErrMaster refuses AppendRaw on a master.
	ErrMaster = errors.New("store: writable: this store is a master")
	// ErrOffsetMismatch refuses AppendRaw at an offset other than the end.
	ErrOffsetMismatch = errors.New("store: offset is not the end of the commit log")
)

// Role is the store's current role.
func (s *Store) Role() Role { return Role(s.role.Load()) }

// IsWritable reports whether the role takes local puts (a master).
func (s *Store) IsWritable() bool { return s.Role() != Slave }
