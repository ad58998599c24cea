package auth

import (
	"net/netip"
	"strings"
	"sync"
)

// maxDecisions bounds the decisions one snapshot remembers: past it new
// ones are computed each time (requests naming ever new resources cannot
// grow the cache).
const maxDecisions = 4096

// decisionKey is one question decide answers for a normal user.
type decisionKey struct {
	user   string
	typ    ResourceType
	name   string
	action Action
	ip     netip.Addr
}

// decisions remembers decide's answers for one immutable snapshot of the
// metadata: a changed user or ACL publishes a new snapshot with an empty
// cache, so nothing is ever stale. The answer is decide's detail ("" for
// allowed).
type decisions struct {
	mu sync.RWMutex
	m  map[decisionKey]string
}

func newDecisions() *decisions { return &decisions{m: make(map[decisionKey]string)} }

// decide is the package's decide, remembered per snapshot.
func (d *decisions) decide(user string, acl *ACL, res *Resource, want Action, ip netip.Addr) string {
	k := decisionKey{user: user, typ: res.Type, name: res.Name, action: want, ip: ip}
	d.mu.RLock()
	detail, ok := d.m[k]
	full := len(d.m) >= maxDecisions
	d.mu.RUnlock()
	if ok {
		return detail
	}
	detail = decide(acl, res, want, ip)
	if !full {
		// The names may alias a request: the cache keeps copies.
		k.user, k.name = strings.Clone(k.user), strings.Clone(k.name)
		d.mu.Lock()
		if len(d.m) < maxDecisions {
			d.m[k] = detail
		}
		d.mu.Unlock()
	}
	return detail
}
