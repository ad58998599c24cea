package conformance

// haDataScenarios are the replication scenarios on data and metadata
// (byte-identical logs, catch-up, metadata sync, redirects, haStatus).
var haDataScenarios = []HAScenario{}
