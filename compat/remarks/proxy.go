package remarks

// Java proxy (rocketmq-proxy 5.3.3, remoting/activity) remarks.

// ProxyNoBrokerName is AbstractRemotingActivity's VERSION_NOT_SUPPORTED for
// a request that names no broker (Java's text says bname whichever of the
// bname / n keys it looked for).
const ProxyNoBrokerName = "Request doesn't have field bname"

// ProxyForwardFailed is the SYSTEM_ERROR remark of a request the proxy
// could not take to its broker or whose answer did not come back: Java's
// writeErrResponse puts the exception's message there; ours is the error.
func ProxyForwardFailed(err string) string { return err }

// ProxyRelayFailed is the SYSTEM_ERROR answer to a broker's request
// (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY …) the proxy could
// not relay to its client's connection.
func ProxyRelayFailed(err string) string { return "relay to client failed: " + err }

// ProxyBadHeader is the SYSTEM_ERROR of a request whose header does not
// decode (Java: the RemotingCommandException's message).
func ProxyBadHeader(err string) string { return err }
