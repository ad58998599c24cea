package auth

import (
	"net/netip"

	"github.com/rocketgo/rocketgo/compat/remarks"
)

func noPermission(username string, res *Resource, ip netip.Addr, detail string) string {
	src := ""
	if ip.IsValid() {
		src = ip.Unmap().String()
	}
	return remarks.AuthNoPermission(subjectKey(username), res.Key(), src, detail)
}

// maxSortedMatches is the size of the on-stack array for matching
// entries; Java's TimSort sorts runs this short by binary insertion only,
// which decide emulates.
const maxSortedMatches = 32

// decide is Java's AclAuthorizationHandler for one resource: collect the
// entries of the Custom policy that match the resource, action and
// source (those of the Default policy if none does), sort them with
// Java's comparator and obey the first. It returns "" when allowed, else
// the detail of the refusal.
func decide(acl *ACL, res *Resource, want Action, ip netip.Addr) string {
	if acl == nil {
		return remarks.AuthNoMatchedPolicy
	}
	var buf [maxSortedMatches]*Entry
	matched := collect(buf[:0], acl.policy(PolicyCustom), res, want, ip)
	if len(matched) == 0 {
		matched = collect(matched, acl.policy(PolicyDefault), res, want, ip)
	}
	if len(matched) == 0 {
		return remarks.AuthNoMatchedPolicy
	}
	javaSmallSort(matched)
	if matched[0].Decision == Deny {
		return remarks.AuthDecisionDeny
	}
	return ""
}

func collect(dst []*Entry, p *Policy, res *Resource, want Action, ip netip.Addr) []*Entry {
	if p == nil {
		return dst
	}
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Resource.matches(res) && e.matchAction(want) && e.matchSource(ip) {
			dst = append(dst, e)
		}
	}
	return dst
}

// compareEntries is Java 5.3.3's AclAuthorizationHandler.comparePolicyEntries,
// quirks included:
//
// compat: an entry on any resource ("*") sorts after a typed one; two
// prefixes sort shortest first (the less specific one wins); a literal and
// a prefix (or either and "Topic:*") compare as "first argument smaller",
// whichever it is, so the outcome depends on the order of the entries;
// and when the resources tie, Deny sorts after Allow (Allow wins), despite
// Java's comment saying Deny has priority.
func compareEntries(o1, o2 *Entry) int {
	r1, r2 := &o1.Resource, &o2.Resource
	c := 0
	switch {
	case r1.Type != r2.Type:
		if r1.Type == ResourceAny {
			c = 1
		}
		if r2.Type == ResourceAny {
			c = -1
		}
	case r1.Pattern == r2.Pattern:
		if r1.Pattern == PatternPrefixed {
			c = cmpInt(utf16Len(r1.Name), utf16Len(r2.Name))
		}
	default:
		if r1.Pattern == PatternLiteral || r1.Pattern == PatternPrefixed {
			c = -1
		}
	}
	if c != 0 {
		return c
	}
	if o1.Decision == Deny {
		return 1
	}
	if o2.Decision == Deny {
		return -1
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// utf16Len is the length of s in UTF-16 code units (Java's length()).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// javaSmallSort sorts a exactly as Java's List.sort (TimSort) does for
// fewer than 32 elements: find the leading run (reversing a strictly
// descending one), then binary insertion. Java's comparator here is not a
// total order, so only the same steps give the same first element. Longer
// lists take the same steps too (Java would merge runs instead).
func javaSmallSort(a []*Entry) {
	n := len(a)
	if n < 2 {
		return
	}
	run := 1
	if compareEntries(a[1], a[0]) < 0 {
		run = 2
		for run < n && compareEntries(a[run], a[run-1]) < 0 {
			run++
		}
		for i, j := 0, run-1; i < j; i, j = i+1, j-1 {
			a[i], a[j] = a[j], a[i]
		}
	} else {
		run = 2
		for run < n && compareEntries(a[run], a[run-1]) >= 0 {
			run++
		}
	}
	for start := run; start < n; start++ {
		pivot := a[start]
		left, right := 0, start
		for left < right {
			mid := int(uint(left+right) >> 1)
			if compareEntries(pivot, a[mid]) < 0 {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(a[left+1:start+1], a[left:start])
		a[left] = pivot
	}
}
