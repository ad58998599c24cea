package auth

import (
	"net/netip"
	"strings"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// DeniedError is a refusal Java raises as an AuthenticationException or
// AuthorizationException; the admin codes answer it NO_PERMISSION with
// its text. Other errors (storage) are system errors.
type DeniedError struct{ Msg string }

func (e *DeniedError) Error() string { return e.Msg }

func denied(msg string) error { return &DeniedError{Msg: msg} }

// ACL is the access of one subject: at most one policy of each type.
type ACL struct {
	Username string // the subject is "User:<Username>"
	Policies []Policy
}

// Subject is Java's subject key, "User:name".
func (a *ACL) Subject() string { return subjectKey(a.Username) }

// Policy is a list of entries of one type. Authorization looks at the
// Custom policy first and at the Default one only when no Custom entry
// matches.
type Policy struct {
	Type    PolicyType
	Entries []Entry
}

// Entry grants or denies actions on a resource, optionally from some
// source addresses only.
type Entry struct {
	Resource  ResourcePattern
	Actions   []Action // one action each, in the order given
	SourceIPs []string // IPs and CIDRs as given; empty: from anywhere
	Decision  Decision

	mask Action    // Actions or'ed (compiled)
	ips  []ipMatch // SourceIPs parsed (compiled)
}

// ipMatch is one parsed source address: an exact address or a prefix.
type ipMatch struct {
	addr   netip.Addr
	prefix netip.Prefix
	cidr   bool
}

func parseIPMatch(s string) (ipMatch, bool) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return ipMatch{}, false
		}
		return ipMatch{prefix: p, cidr: true}, true
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ipMatch{}, false
	}
	return ipMatch{addr: a.Unmap()}, true
}

// compile fills the derived fields; the entry must have been validated.
func (e *Entry) compile() {
	e.mask = 0
	for _, a := range e.Actions {
		e.mask |= a
	}
	e.ips = e.ips[:0]
	for _, s := range e.SourceIPs {
		if m, ok := parseIPMatch(s); ok {
			e.ips = append(e.ips, m)
		}
	}
}

// matchAction is Java's PolicyEntry.isMatchAction: the request asks for
// Any, or the entry grants one of the asked actions, or All.
func (e *Entry) matchAction(want Action) bool {
	if e.mask == 0 {
		return false
	}
	if want&ActionAny != 0 {
		return true
	}
	return want&e.mask != 0 || e.mask&ActionAll != 0
}

// matchSource is Java's Environment.isMatch.
//
// compat: Java compares a plain IP as a string with the channel's address
// text; we compare addresses, so "::1" also matches Java's
// "0:0:0:0:0:0:0:1".
func (e *Entry) matchSource(ip netip.Addr) bool {
	if len(e.SourceIPs) == 0 {
		return true
	}
	if !ip.IsValid() {
		return false
	}
	ip = ip.Unmap()
	for i := range e.ips {
		m := &e.ips[i]
		if m.cidr {
			if m.prefix.Contains(ip) {
				return true
			}
		} else if m.addr == ip {
			return true
		}
	}
	return false
}

// ACLFromInfo converts an admin body like Java's AclConverter: policies
// without entries are dropped, unknown action names skipped; the subject
// of the body wins over fallbackSubject (the request header's) as in
// AdminBrokerProcessor. The result still has to pass validation.
func ACLFromInfo(info *body.AclInfo, fallbackSubject string) (ACL, bool) {
	name, ok := ParseSubject(info.Subject)
	if !ok {
		if name, ok = ParseSubject(fallbackSubject); !ok {
			return ACL{}, false
		}
	}
	acl := ACL{Username: name}
	for _, pi := range info.Policies {
		if len(pi.Entries) == 0 {
			continue
		}
		pt, _ := ParsePolicyType(pi.PolicyType)
		p := Policy{Type: pt}
		for _, ei := range pi.Entries {
			var e Entry
			if r, ok := ParseResourcePattern(ei.Resource); ok {
				e.Resource = r
			}
			for _, an := range ei.Actions {
				if a, ok := ParseAction(an); ok {
					e.Actions = append(e.Actions, a)
				}
			}
			if len(ei.SourceIps) > 0 {
				e.SourceIPs = append([]string(nil), ei.SourceIps...)
			}
			e.Decision, _ = parseDecision(ei.Decision)
			p.Entries = append(p.Entries, e)
		}
		acl.Policies = append(acl.Policies, p)
	}
	return acl, true
}

// Info is a as the admin body AclInfo.
func (a *ACL) Info() body.AclInfo {
	info := body.AclInfo{Subject: a.Subject()}
	if len(a.Policies) == 0 {
		return info
	}
	info.Policies = make([]body.PolicyInfo, len(a.Policies))
	for i := range a.Policies {
		p := &a.Policies[i]
		pi := body.PolicyInfo{PolicyType: p.Type.String(), Entries: make([]body.PolicyEntryInfo, len(p.Entries))}
		for j := range p.Entries {
			e := &p.Entries[j]
			ei := body.PolicyEntryInfo{Resource: e.Resource.Key(), Decision: e.Decision.String()}
			for _, act := range e.Actions {
				ei.Actions = append(ei.Actions, act.String())
			}
			if len(e.SourceIPs) > 0 {
				ei.SourceIps = e.SourceIPs
			}
			pi.Entries[j] = ei
		}
		info.Policies[i] = pi
	}
	return info
}

// validateACL is Java's AuthorizationMetadataManagerImpl.validate with
// its messages; then unset policy types become Custom (initAcl).
func validateACL(a *ACL) error {
	if len(a.Policies) == 0 {
		return denied(remarks.AuthPoliciesEmpty)
	}
	for i := range a.Policies {
		p := &a.Policies[i]
		if len(p.Entries) == 0 {
			return denied(remarks.AuthEntriesEmpty)
		}
		for j := range p.Entries {
			if err := validateEntry(&p.Entries[j]); err != nil {
				return err
			}
		}
	}
	for i := range a.Policies {
		if a.Policies[i].Type == 0 {
			a.Policies[i].Type = PolicyCustom
		}
	}
	return nil
}

func validateEntry(e *Entry) error {
	if e.Resource.Type == ResourceUnknown && e.Resource.Pattern == 0 {
		return denied(remarks.AuthResourceNull)
	}
	if len(e.Actions) == 0 {
		return denied(remarks.AuthActionsEmpty)
	}
	for _, a := range e.Actions {
		if a == ActionAny {
			return denied(remarks.AuthActionsAny)
		}
	}
	for _, s := range e.SourceIPs {
		if isBlank(s) {
			return denied(remarks.AuthSourceIPEmpty)
		}
		if _, ok := parseIPMatch(s); !ok {
			return denied(remarks.AuthSourceIPInvalid)
		}
	}
	if e.Decision == 0 {
		return denied(remarks.AuthDecisionIllegal)
	}
	return nil
}

// clone deep-copies a, strings included (those of a request alias its
// buffer), so that a published ACL is never written again.
func (a *ACL) clone() *ACL {
	c := &ACL{Username: strings.Clone(a.Username), Policies: make([]Policy, len(a.Policies))}
	for i, p := range a.Policies {
		entries := make([]Entry, len(p.Entries))
		for j, e := range p.Entries {
			e.Resource.Name = strings.Clone(e.Resource.Name)
			e.Actions = append([]Action(nil), e.Actions...)
			ips := make([]string, len(e.SourceIPs))
			for k, ip := range e.SourceIPs {
				ips[k] = strings.Clone(ip)
			}
			e.SourceIPs = ips
			if len(ips) == 0 {
				e.SourceIPs = nil
			}
			e.ips = nil
			entries[j] = e
		}
		c.Policies[i] = Policy{Type: p.Type, Entries: entries}
	}
	return c
}

// compile fills every entry's derived fields.
func (a *ACL) compile() {
	for i := range a.Policies {
		for j := range a.Policies[i].Entries {
			a.Policies[i].Entries[j].compile()
		}
	}
}

func (a *ACL) policy(t PolicyType) *Policy {
	for i := range a.Policies {
		if a.Policies[i].Type == t {
			return &a.Policies[i]
		}
	}
	return nil
}

// merge is Java's Acl.updatePolicy: a new policy type is added; entries
// of an existing type replace the entry with the same resource (actions,
// sources and decision) or are appended.
func (a *ACL) merge(policies []Policy) {
	for _, np := range policies {
		old := a.policy(np.Type)
		if old == nil {
			a.Policies = append(a.Policies, np)
			continue
		}
		for _, ne := range np.Entries {
			found := false
			for k := range old.Entries {
				if old.Entries[k].Resource == ne.Resource {
					oe := &old.Entries[k]
					oe.Actions, oe.SourceIPs, oe.Decision = ne.Actions, ne.SourceIPs, ne.Decision
					found = true
					break
				}
			}
			if !found {
				old.Entries = append(old.Entries, ne)
			}
		}
	}
}

// deleteEntry is Java's Acl.deletePolicy: remove the entry for res from
// the policy of type t, and the policy when it has no entry left.
func (a *ACL) deleteEntry(t PolicyType, res ResourcePattern) {
	for i := range a.Policies {
		p := &a.Policies[i]
		if p.Type != t {
			continue
		}
		for k := range p.Entries {
			if p.Entries[k].Resource == res {
				p.Entries = append(p.Entries[:k], p.Entries[k+1:]...)
				break
			}
		}
		if len(p.Entries) == 0 {
			a.Policies = append(a.Policies[:i], a.Policies[i+1:]...)
		}
		return
	}
}
