package conformance

// haKillScenarios are the replication scenarios that kill a broker under
// client load (consume from the slave, SYNC_MASTER with inSyncReplicas=2).
var haKillScenarios = []HAScenario{}
