package body

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Controller bodies (RIP-44 controller mode): SyncStateSet,
// ElectMasterResponseBody, BrokerReplicasInfo and the broker-name list of
// CONTROLLER_GET_SYNC_STATE_DATA, written as fastjson writes the Java
// classes (properties sorted, nulls left out, Long map keys bare).

// SyncStateSet is Java's SyncStateSet: the in-sync broker ids of a broker
// set and the epoch of that set.
type SyncStateSet struct {
	IDs   []int64 // syncStateSet
	Epoch int32   // syncStateSetEpoch
}

// AppendSyncStateSet writes {"syncStateSet":[…],"syncStateSetEpoch":n}.
func AppendSyncStateSet(dst []byte, s SyncStateSet) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	appendIDs(&w, "syncStateSet", s.IDs)
	w.IntField("syncStateSetEpoch", int64(s.Epoch))
	w.ObjectEnd()
	return w.Buf
}

func appendIDs(w *fastjson.Writer, key string, ids []int64) {
	w.Key(key)
	w.ArrayStart()
	for _, id := range ids {
		w.Int(id)
	}
	w.ArrayEnd()
}

// DecodeSyncStateSet reads a SyncStateSet body. A missing set reads as
// empty; ids beyond maxIDs are an error (the body comes from the network).
func DecodeSyncStateSet(b []byte, maxIDs int) (SyncStateSet, error) {
	var s SyncStateSet
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "syncStateSet":
			for rd.ArrayStart(); rd.More(); {
				if len(s.IDs) >= maxIDs {
					rd.Fail("too many ids")
					break
				}
				s.IDs = append(s.IDs, rd.Int())
			}
		case "syncStateSetEpoch":
			v := rd.Int()
			if v < -1<<31 || v >= 1<<31 {
				rd.Fail("epoch out of int range")
			}
			s.Epoch = int32(v)
		default:
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return s, fmt.Errorf("body: sync state set: %w", err)
	}
	return s, nil
}

// MemberGroup is Java's BrokerMemberGroup: a broker set and its members'
// addresses by broker id.
type MemberGroup struct {
	Cluster, BrokerName string
	Addrs               []BrokerAddr // ascending ids
}

// ElectMasterResponseBody is Java's ElectMasterResponseBody. Group is nil
// when the election kept the old master (Java leaves it null then).
type ElectMasterResponseBody struct {
	Group   *MemberGroup
	SyncSet []int64
}

// AppendElectMasterResponseBody writes
// {"brokerMemberGroup":{"brokerAddrs":{1:"…"},"brokerName":…,"cluster":…},"syncStateSet":[…]}.
func AppendElectMasterResponseBody(dst []byte, b ElectMasterResponseBody) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	if g := b.Group; g != nil {
		w.Key("brokerMemberGroup")
		w.ObjectStart()
		w.Key("brokerAddrs")
		w.ObjectStart()
		for _, a := range g.Addrs {
			w.KeyInt(a.ID)
			w.String(a.Addr)
		}
		w.ObjectEnd()
		w.StringField("brokerName", g.BrokerName)
		w.StringField("cluster", g.Cluster)
		w.ObjectEnd()
	}
	appendIDs(&w, "syncStateSet", b.SyncSet)
	w.ObjectEnd()
	return w.Buf
}

// DecodeElectMasterResponseBody reads what AppendElectMasterResponseBody
// (or Java) wrote.
func DecodeElectMasterResponseBody(b []byte) (ElectMasterResponseBody, error) {
	var out ElectMasterResponseBody
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "brokerMemberGroup":
			if rd.Null() {
				continue
			}
			g := &MemberGroup{}
			for rd.ObjectStart(); rd.More(); {
				switch rd.Key() {
				case "brokerAddrs":
					for rd.ObjectStart(); rd.More(); {
						id, err := strconv.ParseInt(rd.Key(), 10, 64)
						if err != nil {
							rd.Fail("broker id key")
						}
						g.Addrs = append(g.Addrs, BrokerAddr{ID: id, Addr: rd.String()})
					}
				case "brokerName":
					g.BrokerName = rd.String()
				case "cluster":
					g.Cluster = rd.String()
				default:
					rd.Skip()
				}
			}
			out.Group = g
		case "syncStateSet":
			for rd.ArrayStart(); rd.More(); {
				out.SyncSet = append(out.SyncSet, rd.Int())
			}
		default:
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return out, fmt.Errorf("body: elect master response: %w", err)
	}
	return out, nil
}

// ReplicaIdentity is one broker of a broker set in BrokerReplicasInfo.
type ReplicaIdentity struct {
	BrokerName    string
	BrokerID      int64
	BrokerAddress string
	Alive         bool
}

// ReplicasInfo is one broker set in BrokerReplicasInfo. MasterBrokerID 0
// means no master (Java: null, and then masterAddress is null too).
type ReplicasInfo struct {
	MasterBrokerID    int64
	MasterAddress     string
	MasterEpoch       int32
	SyncStateSetEpoch int32
	InSync, NotInSync []ReplicaIdentity
}

// BrokerReplicasEntry pairs a broker name with its replicas.
type BrokerReplicasEntry struct {
	BrokerName string
	Info       ReplicasInfo
}

// AppendBrokerReplicasInfo writes Java's BrokerReplicasInfo:
// {"replicasInfoTable":{"name":{"inSyncReplicas":[…],"masterAddress":…,
// "masterBrokerId":…,"masterEpoch":…,"notInSyncReplicas":[…],"syncStateSetEpoch":…}}}.
// Entries are written in the given order.
func AppendBrokerReplicasInfo(dst []byte, entries []BrokerReplicasEntry) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.Key("replicasInfoTable")
	w.ObjectStart()
	for i := range entries {
		e := &entries[i]
		w.Key(e.BrokerName)
		w.ObjectStart()
		appendReplicas(&w, "inSyncReplicas", e.Info.InSync)
		if e.Info.MasterBrokerID != 0 {
			w.OptStringField("masterAddress", e.Info.MasterAddress)
			w.IntField("masterBrokerId", e.Info.MasterBrokerID)
		}
		w.IntField("masterEpoch", int64(e.Info.MasterEpoch))
		appendReplicas(&w, "notInSyncReplicas", e.Info.NotInSync)
		w.IntField("syncStateSetEpoch", int64(e.Info.SyncStateSetEpoch))
		w.ObjectEnd()
	}
	w.ObjectEnd()
	w.ObjectEnd()
	return w.Buf
}

func appendReplicas(w *fastjson.Writer, key string, rs []ReplicaIdentity) {
	w.Key(key)
	w.ArrayStart()
	for _, r := range rs {
		w.ObjectStart()
		w.BoolField("alive", r.Alive)
		w.StringField("brokerAddress", r.BrokerAddress)
		w.IntField("brokerId", r.BrokerID)
		w.StringField("brokerName", r.BrokerName)
		w.ObjectEnd()
	}
	w.ArrayEnd()
}

// DecodeBrokerReplicasInfo reads a BrokerReplicasInfo body.
func DecodeBrokerReplicasInfo(b []byte) ([]BrokerReplicasEntry, error) {
	var out []BrokerReplicasEntry
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() != "replicasInfoTable" {
			rd.Skip()
			continue
		}
		for rd.ObjectStart(); rd.More(); {
			e := BrokerReplicasEntry{BrokerName: rd.Key()}
			for rd.ObjectStart(); rd.More(); {
				switch rd.Key() {
				case "inSyncReplicas":
					e.Info.InSync = readReplicas(rd)
				case "notInSyncReplicas":
					e.Info.NotInSync = readReplicas(rd)
				case "masterAddress":
					e.Info.MasterAddress = rd.String()
				case "masterBrokerId":
					e.Info.MasterBrokerID = rd.Int()
				case "masterEpoch":
					e.Info.MasterEpoch = int32(rd.Int())
				case "syncStateSetEpoch":
					e.Info.SyncStateSetEpoch = int32(rd.Int())
				default:
					rd.Skip()
				}
			}
			out = append(out, e)
		}
	}
	if err := rd.End(); err != nil {
		return out, fmt.Errorf("body: broker replicas info: %w", err)
	}
	return out, nil
}

func readReplicas(rd *fastjson.Reader) []ReplicaIdentity {
	var rs []ReplicaIdentity
	for rd.ArrayStart(); rd.More(); {
		var r ReplicaIdentity
		for rd.ObjectStart(); rd.More(); {
			switch rd.Key() {
			case "alive":
				r.Alive = rd.Bool()
			case "brokerAddress":
				r.BrokerAddress = rd.String()
			case "brokerId":
				r.BrokerID = rd.Int()
			case "brokerName":
				r.BrokerName = rd.String()
			default:
				rd.Skip()
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// DecodeBrokerNames reads the JSON string array of
// CONTROLLER_GET_SYNC_STATE_DATA, at most max names.
func DecodeBrokerNames(b []byte, max int) ([]string, error) {
	var out []string
	rd := fastjson.NewReader(b)
	for rd.ArrayStart(); rd.More(); {
		if len(out) >= max {
			rd.Fail("too many broker names")
			break
		}
		out = append(out, rd.String())
	}
	if err := rd.End(); err != nil {
		return out, fmt.Errorf("body: broker names: %w", err)
	}
	return out, nil
}

// AppendBrokerNames writes a JSON string array of broker names.
func AppendBrokerNames(dst []byte, names []string) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ArrayStart()
	for _, n := range names {
		w.String(n)
	}
	w.ArrayEnd()
	return w.Buf
}
