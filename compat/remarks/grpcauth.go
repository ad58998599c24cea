package remarks

import "strconv"

// Messages of the 5.3 auth module's gRPC side (DefaultAuthenticationContextBuilder
// reading the `authorization` metadata, DefaultAuthorizationContextBuilder
// reading a request's resources), which Java's proxy answers in a
// Status with Code UNAUTHORIZED (40100).
const (
	GRPCAuthDatetimeNull   = "datetime is null."
	GRPCAuthHeaderBad      = "authentication header is incorrect."
	GRPCAuthContextError   = "create authentication context error."
	GRPCAuthTopicNull      = "topic is null."
	GRPCAuthGroupNull      = "group is null."
	GRPCAuthMessageNull    = "message is null."
	GRPCAuthQueueNull      = "messageQueue is null."
	GRPCAuthNoPubSub       = "settings command doesn't have publishing or subscription."
	GRPCAuthnFailedGeneric = "Authentication failed. Please verify the credentials and try again."
)

// GRPCAuthKeyValuesBad is the refusal of an `authorization` item without
// '=' (n is how many parts it split into).
func GRPCAuthKeyValuesBad(n int) string {
	return "authentication keyValues length is incorrect, actual length=" + strconv.Itoa(n) + "."
}

// GRPCAuthCredentialBad is the refusal of a Credential with no access key.
func GRPCAuthCredentialBad(n int) string {
	return "authentication credential length is incorrect, actual length=" + strconv.Itoa(n) + "."
}
