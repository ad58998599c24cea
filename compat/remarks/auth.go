package remarks

// Remarks of the 5.3 auth module (ACL 2.0): its exception texts, which
// the broker answers NO_PERMISSION (16) with, and AdminBrokerProcessor's
// own for AUTH_* 3001–3010.

// Authentication (DefaultAuthenticationHandler).
const (
	AuthUsernameNull     = "username cannot be null."
	AuthSignatureFailed  = "check signature failed."
	AuthorizationFailed  = "Authorization failed. Please verify your access rights and try again."
	AuthNoMatchedPolicy  = "no matched policies."
	AuthDecisionDeny     = "the decision is deny."
	AuthUsernameBlank    = "username can not be blank"
	AuthPasswordBlank    = "password can not be blank"
	AuthUserExisted      = "The user is existed"
	AuthUserNotExist     = "The user is not exist"
	AuthPoliciesEmpty    = "The policies is empty."
	AuthEntriesEmpty     = "The policy entries is empty."
	AuthResourceNull     = "The resource is null."
	AuthActionsEmpty     = "The actions is empty."
	AuthActionsAny       = "The actions can not be Any."
	AuthSourceIPEmpty    = "The source ip is empty."
	AuthSourceIPInvalid  = "The source ip is invalid."
	AuthDecisionIllegal  = "The decision is null or illegal."
	AuthSubjectNotExist  = "The subject is not exist."
	AuthSubjectNull      = "The subject is null."
	AuthACLNotExist      = "The acl is not exist."
	AuthAdminNoUsername  = "The username is blank"
	AuthAdminSystemError = "An system error occurred, please try again later."
	AuthAdminSuperCreate = "The super user can only be create by super user"
	// AuthAdminSuperUpdate is also Java's text for deleting a super user.
	AuthAdminSuperUpdate = "The super user can only be update by super user"
	// AuthAdminACLBodyNull is the SYSTEM_ERROR remark of an AUTH_CREATE_ACL
	// or AUTH_UPDATE_ACL without policies: Java throws out of the handler
	// and the remoting layer answers with the exception's text (we leave
	// out its first stack frame).
	AuthAdminACLBodyNull = "org.apache.rocketmq.auth.authorization.exception.AuthorizationException: The body of acl is null"
)

// AuthUserNotFound is authentication's refusal of an unknown AccessKey.
func AuthUserNotFound(user string) string { return "User:" + user + " is not found." }

// AuthUserDisabled is authentication's refusal of a disabled user.
func AuthUserDisabled(user string) string { return "User:" + user + " is disabled." }

// AuthzUserNotFound is authorization's refusal of an unknown user
// (UserAuthorizationHandler; no "is").
func AuthzUserNotFound(user string) string { return "User:" + user + " not found." }

// AuthSuperUserNotFound is isSuperUser's error for an unknown user (no
// final period).
func AuthSuperUserNotFound(user string) string { return "User:" + user + " is not found" }

// AuthNoPermission is AclAuthorizationHandler's refusal; detail is
// AuthNoMatchedPolicy or AuthDecisionDeny.
func AuthNoPermission(subject, resource, sourceIP, detail string) string {
	return subject + " has no permission to access " + resource + " from " + sourceIP + ", " + detail
}

// AuthSubjectOfNotExist is createAcl's refusal of an unknown user.
func AuthSubjectOfNotExist(subject string) string {
	return "The subject of " + subject + " is not exist."
}

// AuthAdminUserBodyInvalid answers an AUTH_CREATE_USER / AUTH_UPDATE_USER
// whose UserInfo body is missing or does not decode (Java fails with a
// JSON exception; ours names the body).
const AuthAdminUserBodyInvalid = "decode UserInfo: invalid body"

// AuthorizationContextError is the message of Java's AuthorizationException
// when the resources of a request cannot be read (a heartbeat or lock body
// that does not decode).
const AuthorizationContextError = "parse authorization context error."

// ConfigNeedsSuperUser refuses UPDATE_BROKER_CONFIG from a user who is not
// a super user while authentication is on (ours: Java checks nothing).
const ConfigNeedsSuperUser = "only a super user may update the broker config"

// GuardNeedsSuperUser refuses a signed name-server or controller write
// from a user who is not a super user while authorization is off there
// (ours: Java's name server and controller check nothing).
const GuardNeedsSuperUser = "only a super user may change the name server's or controller's state"
