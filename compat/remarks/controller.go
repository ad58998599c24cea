package remarks

import "strconv"

// Controller remarks: Java's ControllerRequestProcessor and
// ReplicasInfoManager word for word, then our own refusals (see
// controller/doc.go).
const (
	ControllerNotLeader      = "The controller is not in leader state"
	HeartbeatOK              = "Heart beat success"
	HeartbeatNoBrokerID      = "Heart beat with empty brokerId"
	NoResponseCode           = "not set any response code" // Java's createResponseCommand(null)
	BrokerMetadataNotExisted = "Broker metadata is not existed"
	SyncStateSetUnchanged    = "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet"
	BrokerNotRegistered      = "Broker hasn't been registered"
	OldMasterDownElectFailed = "Old master has down and failed to elect a new broker master"
	ElectMasterFailed        = "Failed to elect a new master"

	// Our own (CleanIDsTooMany: Java has no bound on the ids to clean).
	CleanIDsTooMany          = "Please set the option <brokerControllerIdsToClean> according to the format, exception: too many ids"
	ElectNeedsBrokerID       = "ELECT_MASTER from a broker needs the asking brokerId"
	HeartbeatNameTooLong     = "Heart beat with too long a name or address"
	HeartbeatOtherConnection = "Heart beat refused: the broker beats on another connection"
	HeartbeatTooManyBrokers  = "Heart beat refused: too many brokers"
)

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// AlterSyncStateSetNotLeader: the asking master is not the current one
// (ids as Java's Long.toString, "null" for none).
func AlterSyncStateSetNotLeader(leader, asking string) string {
	return "Rejecting alter syncStateSet request because the current leader is:{" + leader + "}, not {" + asking + "}"
}

// AlterSyncStateSetNotOnMasterConnection is our own: the request did not
// come on the master's connection.
func AlterSyncStateSetNotOnMasterConnection(masterID int64) string {
	return "Rejecting alter syncStateSet request because it does not come on the connection of master {" + i64(masterID) + "}"
}

// AlterSyncStateSetMasterEpoch is CONTROLLER_FENCED_MASTER_EPOCH's remark.
func AlterSyncStateSetMasterEpoch(current, asked int64) string {
	return "Rejecting alter syncStateSet request because the current master epoch is:{" + i64(current) + "}, not {" + i64(asked) + "}"
}

// AlterSyncStateSetEpoch is CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH's remark.
func AlterSyncStateSetEpoch(current, asked int64) string {
	return "Rejecting alter syncStateSet request because the current syncStateSet epoch is:{" + i64(current) + "}, not {" + i64(asked) + "}"
}

// AlterSyncStateSetReplicaNotExist is CONTROLLER_INVALID_REPLICAS' remark.
func AlterSyncStateSetReplicaNotExist(id int64) string {
	return "Rejecting alter syncStateSet request because the replicas {" + i64(id) + "} don't exist"
}

// AlterSyncStateSetReplicaNotAlive is CONTROLLER_BROKER_NOT_ALIVE's remark.
func AlterSyncStateSetReplicaNotAlive(id int64) string {
	return "Rejecting alter syncStateSet request because the replicas {" + i64(id) + "} don't alive"
}

// AlterSyncStateSetWithoutLeader: the new set leaves the master out.
func AlterSyncStateSetWithoutLeader(master int64) string {
	return "Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {" + i64(master) + "}"
}

// OldMasterStillAlive is CONTROLLER_MASTER_STILL_EXIST's remark.
func OldMasterStillAlive(master int64, brokerName string) string {
	return "The old master " + i64(master) + " is still alive, not need to elect new master for broker " + brokerName
}

// BrokerNotOnConnection is our own: a broker's request on a connection
// that is not its own.
func BrokerNotOnConnection(brokerName string, id int64) string {
	return "Broker [" + brokerName + ", " + i64(id) + "] is not registered on this connection"
}

// BrokerOnOtherLiveConnection is our own: the broker is registered on
// another live connection.
func BrokerOnOtherLiveConnection(brokerName string, id int64) string {
	return "Broker [" + brokerName + ", " + i64(id) + "] is registered on another live connection"
}

// ElectBrokerNotMember is our own refusal of a designated election: the
// broker is not in the set.
func ElectBrokerNotMember(id int64, brokerSet string) string {
	return "Failed to elect a new master: broker " + i64(id) + " is not a member of broker set " + brokerSet
}

// ElectBrokerNotAlive: the designated broker is not alive.
func ElectBrokerNotAlive(id int64) string {
	return "Failed to elect a new master: broker " + i64(id) + " is not alive"
}

// ElectBrokerNotInSyncSet: the designated broker is not in sync.
func ElectBrokerNotInSyncSet(id int64) string {
	return "Failed to elect a new master: broker " + i64(id) + " is not in the SyncStateSet"
}

// ApplyBrokerIDFailed is CONTROLLER_BROKER_ID_INVALID's remark.
func ApplyBrokerIDFailed(id int64, brokerName string) string {
	return "Fail to apply brokerId: " + i64(id) + " in broker-set: " + brokerName
}

// ApplyBrokerIDSetNotRegistered is CONTROLLER_BROKER_ID_INVALID's remark
// for an unknown broker set.
func ApplyBrokerIDSetNotRegistered(brokerName string, id int64) string {
	return "Broker-set: " + brokerName + " hasn't been registered in controller, but broker try to apply brokerId: " + i64(id)
}

// TooManyBrokerSets is our own refusal past maxBrokerSets.
func TooManyBrokerSets(brokerName string, max int64) string {
	return "Broker-set: " + brokerName + " refused: the controller holds " + i64(max) + " broker sets"
}

// BrokerSetNotRegistered is CONTROLLER_BROKER_NEED_TO_BE_REGISTERED's remark.
func BrokerSetNotRegistered(brokerName string) string {
	return "Broker-set: " + brokerName + " hasn't been registered in controller"
}

// BrokerIDNotRegistered is CONTROLLER_BROKER_NEED_TO_BE_REGISTERED's
// remark for an unknown id.
func BrokerIDNotRegistered(id int64, brokerName string) string {
	return "BrokerId: " + i64(id) + " hasn't been registered in broker-set: " + brokerName
}

// CleanBrokerStillAlive is CONTROLLER_INVALID_CLEAN_BROKER_METADATA's
// remark for a live broker set.
func CleanBrokerStillAlive(brokerName string) string {
	return "Broker " + brokerName + " is still alive, clean up failure"
}

// CleanBrokerIDStillAlive is the same for one live id (compat: Java's two
// spaces after the comma).
func CleanBrokerIDStillAlive(brokerName string, id int64) string {
	return "Broker [" + brokerName + ",  " + i64(id) + "] is still alive, clean up failure"
}

// CleanBrokerNotExisted is the clean remark for an unknown broker set.
func CleanBrokerNotExisted(brokerName string) string {
	return "Broker " + brokerName + " is not existed,clean broker data failure."
}

// CleanIDsBadFormat is the clean remark for an id that does not parse
// (compat: Java puts its NumberFormatException text here).
func CleanIDsBadFormat(id string) string {
	return "Please set the option <brokerControllerIdsToClean> according to the format, exception: " + NumberFormat(id)
}
