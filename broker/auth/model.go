package auth

import (
	"strings"
)

// Action is a set of actions: bit n is Java's Action with code n. A
// request asks for one or more (GET_ROUTEINFO_BY_TOPIC asks Pub|Sub|Get);
// a policy entry grants a list of them.
type Action uint16

// The actions, with Java's codes as bit numbers.
const (
	ActionUnknown Action = 1 << 0 // Java's UNKNOWN: accepted in ACLs, matches nothing
	ActionAll     Action = 1 << 1
	ActionAny     Action = 1 << 2
	ActionPub     Action = 1 << 3
	ActionSub     Action = 1 << 4
	ActionCreate  Action = 1 << 5
	ActionUpdate  Action = 1 << 6
	ActionDelete  Action = 1 << 7
	ActionGet     Action = 1 << 8
	ActionList    Action = 1 << 9
)

var actionNames = [...]struct {
	a    Action
	name string
}{
	{ActionUnknown, "Unknown"}, {ActionAll, "All"}, {ActionAny, "Any"}, {ActionPub, "Pub"}, {ActionSub, "Sub"},
	{ActionCreate, "Create"}, {ActionUpdate, "Update"}, {ActionDelete, "Delete"},
	{ActionGet, "Get"}, {ActionList, "List"},
}

// ParseAction reads one action name, ignoring case like Java's
// Action.getByName.
func ParseAction(name string) (Action, bool) {
	for _, an := range actionNames {
		if strings.EqualFold(an.name, name) {
			return an.a, true
		}
	}
	return 0, false
}

// String gives the names of a's actions joined by ',' (Java's audit log
// form).
func (a Action) String() string {
	var sb strings.Builder
	for _, an := range actionNames {
		if a&an.a != 0 {
			if sb.Len() > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(an.name)
		}
	}
	return sb.String()
}

// ResourceType is Java's ResourceType.
type ResourceType uint8

// Resource types with Java's codes.
const (
	ResourceUnknown   ResourceType = 0
	ResourceAny       ResourceType = 1
	ResourceCluster   ResourceType = 2
	ResourceNamespace ResourceType = 3
	ResourceTopic     ResourceType = 4
	ResourceGroup     ResourceType = 5
)

var resourceTypeNames = [...]string{"Unknown", "Any", "Cluster", "Namespace", "Topic", "Group"}

// String is Java's name of t ("Topic").
func (t ResourceType) String() string {
	if int(t) < len(resourceTypeNames) {
		return resourceTypeNames[t]
	}
	return "Unknown"
}

func parseResourceType(name string) (ResourceType, bool) {
	for i, n := range resourceTypeNames {
		if strings.EqualFold(n, name) {
			return ResourceType(i), true
		}
	}
	return 0, false
}

// Pattern is how a policy entry's resource name matches (Java's
// ResourcePattern).
type Pattern uint8

// Patterns with Java's codes.
const (
	PatternAny      Pattern = 1 // "Topic:*" or "*"
	PatternLiteral  Pattern = 2 // "Topic:foo"
	PatternPrefixed Pattern = 3 // "Topic:foo*"
)

// ResourcePattern is the resource of a policy entry.
type ResourcePattern struct {
	Type    ResourceType
	Name    string // "" for PatternAny; the prefix for PatternPrefixed
	Pattern Pattern
}

// ParseResourcePattern reads a resource key like Java's Resource.of: "*"
// is any resource, "Topic:*" any topic, "Topic:foo*" topics starting
// with foo, "Topic:foo" exactly foo. ok is false where Java gives null
// (blank key, unknown type).
func ParseResourcePattern(key string) (ResourcePattern, bool) {
	if strings.TrimSpace(key) == "" {
		return ResourcePattern{}, false
	}
	if key == "*" {
		return ResourcePattern{Type: ResourceAny, Pattern: PatternAny}, true
	}
	typ, name, _ := strings.Cut(key, ":")
	t, ok := parseResourceType(typ)
	if !ok {
		return ResourcePattern{}, false
	}
	switch {
	case name == "*":
		return ResourcePattern{Type: t, Pattern: PatternAny}, true
	case strings.HasSuffix(name, "*"):
		// compat: Java keeps what precedes the first '*' (substringBefore).
		name, _, _ = strings.Cut(name, "*")
		return ResourcePattern{Type: t, Name: name, Pattern: PatternPrefixed}, true
	}
	return ResourcePattern{Type: t, Name: name, Pattern: PatternLiteral}, true
}

// Key is Java's resource key, the inverse of ParseResourcePattern.
func (r ResourcePattern) Key() string {
	if r.Type == ResourceAny {
		return "*"
	}
	switch r.Pattern {
	case PatternAny:
		return r.Type.String() + ":*"
	case PatternPrefixed:
		return r.Type.String() + ":" + r.Name + "*"
	}
	return r.Type.String() + ":" + r.Name
}

// matches is Java's Resource.isMatch.
func (r *ResourcePattern) matches(res *Resource) bool {
	if r.Type == ResourceAny {
		return true
	}
	if r.Type != res.Type {
		return false
	}
	switch r.Pattern {
	case PatternAny:
		return true
	case PatternLiteral:
		return res.Name == r.Name
	case PatternPrefixed:
		return strings.HasPrefix(res.Name, r.Name)
	}
	return false
}

// Resource is what a request touches: a topic, a group, a cluster.
type Resource struct {
	Type ResourceType
	Name string
}

// Key is "Topic:name", the form Java's refusals name.
func (r Resource) Key() string {
	if r.Type == ResourceAny {
		return "*"
	}
	return r.Type.String() + ":" + r.Name
}

// Topic is the resource of a topic.
func Topic(name string) Resource { return Resource{Type: ResourceTopic, Name: name} }

// Cluster is the resource of a cluster.
func Cluster(name string) Resource { return Resource{Type: ResourceCluster, Name: name} }

// Group is the resource of a consumer or producer group. Like Java's
// Resource.ofGroup, a retry topic names its group: "%RETRY%g" is group g.
func Group(name string) Resource {
	if rest, ok := strings.CutPrefix(name, "%RETRY%"); ok {
		name = rest
	}
	return Resource{Type: ResourceGroup, Name: name}
}

// Decision is Java's Decision.
type Decision uint8

// Decisions with Java's codes.
const (
	Allow Decision = 1
	Deny  Decision = 2
)

// String is Java's name ("Allow", "Deny").
func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return ""
}

func parseDecision(name string) (Decision, bool) {
	switch {
	case strings.EqualFold(name, "Allow"):
		return Allow, true
	case strings.EqualFold(name, "Deny"):
		return Deny, true
	}
	return 0, false
}

// PolicyType is Java's PolicyType.
type PolicyType uint8

// Policy types with Java's codes.
const (
	PolicyCustom  PolicyType = 1
	PolicyDefault PolicyType = 2
)

// String is Java's name ("Custom", "Default").
func (p PolicyType) String() string {
	switch p {
	case PolicyCustom:
		return "Custom"
	case PolicyDefault:
		return "Default"
	}
	return ""
}

// ParsePolicyType reads a policy type name, ignoring case.
func ParsePolicyType(name string) (PolicyType, bool) {
	switch {
	case strings.EqualFold(name, "Custom"):
		return PolicyCustom, true
	case strings.EqualFold(name, "Default"):
		return PolicyDefault, true
	}
	return 0, false
}

// UserType is Java's UserType.
type UserType uint8

// User types with Java's codes; 0 is unset.
const (
	UserSuper  UserType = 1
	UserNormal UserType = 2
)

// String is Java's name ("Super", "Normal"), "" when unset.
func (t UserType) String() string {
	switch t {
	case UserSuper:
		return "Super"
	case UserNormal:
		return "Normal"
	}
	return ""
}

// ParseUserType reads a user type name, ignoring case; 0 for anything
// else (Java's null).
func ParseUserType(name string) UserType {
	switch {
	case strings.EqualFold(name, "Super"):
		return UserSuper
	case strings.EqualFold(name, "Normal"):
		return UserNormal
	}
	return 0
}

// UserStatus is Java's UserStatus.
type UserStatus uint8

// User statuses with Java's codes; 0 is unset.
const (
	UserEnabled  UserStatus = 1
	UserDisabled UserStatus = 2
)

// String is Java's name ("enable", "disable"), "" when unset.
func (s UserStatus) String() string {
	switch s {
	case UserEnabled:
		return "enable"
	case UserDisabled:
		return "disable"
	}
	return ""
}

// ParseUserStatus reads a status name, ignoring case; 0 for anything else.
func ParseUserStatus(name string) UserStatus {
	switch {
	case strings.EqualFold(name, "enable"):
		return UserEnabled
	case strings.EqualFold(name, "disable"):
		return UserDisabled
	}
	return 0
}
