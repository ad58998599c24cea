package header

// Action is a set of the actions Java's auth module knows (its Action
// enum), as bits.
type Action uint16

// Actions, in the order of Java's Action enum codes.
const (
	ActionAll Action = 1 << iota
	ActionAny
	ActionPub
	ActionSub
	ActionCreate
	ActionUpdate
	ActionDelete
	ActionGet
	ActionList
)

// ResourceType is Java's auth ResourceType.
type ResourceType uint8

// Resource types.
const (
	ResourceUnknown ResourceType = iota
	ResourceAny
	ResourceCluster
	ResourceNamespace
	ResourceTopic
	ResourceGroup
)

// ResourceField is one header field that names a resource
// (@RocketMQResource): its extFields key, the resource's type, and the
// splitter when the field holds several names.
type ResourceField struct {
	Key   string
	Type  ResourceType
	Split string
}

// Authz is what authorization needs to know of a request header: the
// actions it performs (@RocketMQAction's action), the resource type of
// the request as a whole (Cluster for cluster-wide admin, Any otherwise),
// and the fields naming topics and groups. Values are shared: read only.
type Authz struct {
	Actions  Action
	Resource ResourceType
	Fields   []ResourceField
}
