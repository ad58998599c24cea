// Package auth is the broker's authentication and authorization, as the
// auth module of Java RocketMQ 5.3.3 (ACL 2.0): users, ACLs, the
// signature check of requests and the policy evaluation, and their
// metadata kept crash-safe in a bbolt file.
//
// It owns the rules; the request pipeline (which request code needs which
// action on which resource) and the admin codes 3001–3010 live in the
// broker package and call Service.
//
// # Signature (signature.go)
//
// A client signs a request as ACL 1.0 did (Java's AclClientRPCHook):
//
//	content   = value(k1) value(k2) … value(kn) body
//	            k1 < k2 < … < kn: every extFields key but "Signature",
//	            in Java String order (UTF-16 units); values only, no
//	            separators; "_UNIQUE_KEY_QUERY" is left out for clients
//	            at or below V4_9_3
//	Signature = base64std(HMAC-SHA1(key = password of user AccessKey, content))
//
// The check hashes the fields in place (no content buffer), with pooled
// hash states, and compares in constant time.
//
// # Evaluation (authorize.go)
//
//	Authenticate: off or whitelisted → pass (no user)
//	              no AccessKey → "username cannot be null."
//	              unknown → "User:<ak> is not found."; disabled → "User:<ak> is disabled."
//	              bad signature → "check signature failed."
//	Authorize:    off, whitelisted or no resource → pass
//	              unknown user → "User:<u> not found."; super user → pass
//	              per resource: entries of the Custom policy matching
//	              resource, action and source IP (else of the Default
//	              policy), sorted as Java sorts them, first one decides:
//	              none → "… no matched policies.", Deny → "… the decision is deny."
//
// # Storage (store.go)
//
//	<dir>/auth.db   bbolt, one transaction per change, fsynced at commit
//	  users  username         → UserInfo JSON {"password","userStatus","userType","username"}
//	  acls   "User:<username>" → AclInfo JSON {"policies":[{"entries":[…],"policyType"}],"subject"}
//
// Everything is loaded into memory at Open. The checks read an immutable
// snapshot (one atomic load, no lock) and allocate nothing on a pass;
// admin changes persist, then publish a changed copy.
package auth
