package body

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSyncStateSetBody(t *testing.T) {
	s := SyncStateSet{IDs: []int64{1, 2}, Epoch: 3}
	b := AppendSyncStateSet(nil, s)
	require.Equal(t, `{"syncStateSet":[1,2],"syncStateSetEpoch":3}`, string(b))
	got, err := DecodeSyncStateSet(b, 10)
	require.NoError(t, err)
	require.Equal(t, s, got)
	// What a Java broker sends (fastjson, any order, spaces allowed).
	got, err = DecodeSyncStateSet([]byte(`{"syncStateSetEpoch":7, "syncStateSet":[3]}`), 10)
	require.NoError(t, err)
	require.Equal(t, SyncStateSet{IDs: []int64{3}, Epoch: 7}, got)
	_, err = DecodeSyncStateSet([]byte(`{"syncStateSet":[1,2,3]}`), 2)
	require.Error(t, err, "more ids than allowed")
	_, err = DecodeSyncStateSet([]byte(`{"syncStateSetEpoch":4294967296}`), 2)
	require.Error(t, err, "epoch beyond int")
	_, err = DecodeSyncStateSet([]byte(`{"syncStateSet":[1,`), 2)
	require.Error(t, err)
}

func TestElectMasterResponseBody(t *testing.T) {
	b := ElectMasterResponseBody{Group: &MemberGroup{Cluster: "c", BrokerName: "b", Addrs: []BrokerAddr{{1, "a:1"}, {2, "a:2"}}}, SyncSet: []int64{2}}
	enc := AppendElectMasterResponseBody(nil, b)
	require.Equal(t, `{"brokerMemberGroup":{"brokerAddrs":{1:"a:1",2:"a:2"},"brokerName":"b","cluster":"c"},"syncStateSet":[2]}`, string(enc))
	got, err := DecodeElectMasterResponseBody(enc)
	require.NoError(t, err)
	require.Equal(t, b, got)
	require.Equal(t, `{"syncStateSet":[]}`, string(AppendElectMasterResponseBody(nil, ElectMasterResponseBody{})))
}

func TestBrokerNamesBody(t *testing.T) {
	b := AppendBrokerNames(nil, []string{"a", "b\"c"})
	got, err := DecodeBrokerNames(b, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b\"c"}, got)
	_, err = DecodeBrokerNames([]byte(`["a","b","c"]`), 2)
	require.Error(t, err)
}

// FuzzControllerBodies: network bodies never panic, and what decodes
// re-encodes to something that decodes the same.
func FuzzControllerBodies(f *testing.F) {
	for _, s := range []string{`{"syncStateSet":[1,2],"syncStateSetEpoch":3}`, `["a","b"]`, `{"replicasInfoTable":{"b":{"inSyncReplicas":[{"alive":true,"brokerId":1}]}}}`,
		`{"brokerMemberGroup":{"brokerAddrs":{1:"a:1"},"brokerName":"b","cluster":"c"},"syncStateSet":[2]}`, `{`, `null`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeSyncStateSet(b, 64); err == nil {
			again, err := DecodeSyncStateSet(AppendSyncStateSet(nil, s), 64)
			if err != nil || len(again.IDs) != len(s.IDs) || again.Epoch != s.Epoch {
				t.Fatalf("sync state set round trip: %v %v %v", s, again, err)
			}
		}
		if names, err := DecodeBrokerNames(b, 64); err == nil {
			again, err := DecodeBrokerNames(AppendBrokerNames(nil, names), 64)
			if err != nil || len(again) != len(names) {
				t.Fatalf("broker names round trip: %q %q %v", names, again, err)
			}
		}
		_, _ = DecodeBrokerReplicasInfo(b)
		_, _ = DecodeElectMasterResponseBody(b)
	})
}
