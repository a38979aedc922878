package security

import (
	"net/netip"
	"slices"
)

// entry is one ACL as the decision loop sees it: the access control entry, with its host parsed
// once, and a pointer to the whole binding for the audit line.
type entry struct {
	principal string
	host      string
	addr      netip.Addr
	op        Operation
	perm      Permission
	binding   *Binding
}

// resourceACLs are the ACLs of one resource pattern, by principal: a check reads only the
// session principal's entries and the User:* ones, however many principals the pattern has.
type resourceACLs struct {
	byPrincipal map[string][]entry
	wildcard    []entry // User:*
}

func (r *resourceACLs) add(e entry) {
	if e.principal == WildcardPrincipal {
		r.wildcard = append(r.wildcard, e)
		return
	}
	r.byPrincipal[e.principal] = append(r.byPrincipal[e.principal], e)
}

// typeIndex holds the ACLs of one resource type. Literal names (including "*") and prefixes are
// map keys; a check probes the literal name, "*", and the name's prefixes of the lengths some
// PREFIXED ACL has: a handful of map lookups whatever the number of ACLs.
type typeIndex struct {
	literal    map[string]*resourceACLs
	prefixed   map[string]*resourceACLs
	prefixLens []int // distinct lengths of the PREFIXED names, ascending
	entries    []entry
}

func (t *typeIndex) pattern(m map[string]*resourceACLs, name string) *resourceACLs {
	r := m[name]
	if r == nil {
		r = &resourceACLs{byPrincipal: map[string][]entry{}}
		m[name] = r
	}
	return r
}

// index is an immutable snapshot of every ACL; changes build a new one (copy on write), so a
// check takes no lock.
type index struct {
	byType   [UserResource + 1]*typeIndex
	bindings map[[16]byte]*Binding
}

func buildIndex(bindings map[[16]byte]*Binding) *index {
	ix := &index{bindings: bindings}
	for _, b := range bindings {
		if int(b.ResourceType) >= len(ix.byType) || b.ResourceType < 0 {
			continue
		}
		t := ix.byType[b.ResourceType]
		if t == nil {
			t = &typeIndex{literal: map[string]*resourceACLs{}, prefixed: map[string]*resourceACLs{}}
			ix.byType[b.ResourceType] = t
		}
		e := entry{principal: b.Principal, host: b.Host, addr: parseHost(b.Host), op: b.Operation, perm: b.Permission, binding: b}
		t.entries = append(t.entries, e)
		switch b.PatternType {
		case Literal:
			t.pattern(t.literal, b.ResourceName).add(e)
		case Prefixed:
			if _, ok := t.prefixed[b.ResourceName]; !ok {
				if l := len(b.ResourceName); !slices.Contains(t.prefixLens, l) {
					t.prefixLens = append(t.prefixLens, l)
				}
			}
			t.pattern(t.prefixed, b.ResourceName).add(e)
		}
	}
	for _, t := range ix.byType {
		if t != nil {
			slices.Sort(t.prefixLens)
		}
	}
	return ix
}

// verdict is the outcome of one decision and the ACL that decided it (nil: the default rule).
type verdict struct {
	allowed bool
	rule    *Binding
}

// matchesDeny reports whether a DENY entry applies to op: its own operation or ALL. A DENY is
// never implied.
func (e *entry) matchesDeny(op Operation) bool {
	return e.perm == Deny && (e.op == op || e.op == OpAll)
}

// matchesAllow reports whether an ALLOW entry grants op: its own operation, ALL, DESCRIBE when it
// grants READ, WRITE, DELETE or ALTER, DESCRIBE_CONFIGS when it grants ALTER_CONFIGS
// (StandardAuthorizerData's implied operations).
func (e *entry) matchesAllow(op Operation) bool {
	if e.perm != Allow {
		return false
	}
	if e.op == op || e.op == OpAll {
		return true
	}
	switch op {
	case OpDescribe:
		return e.op == OpRead || e.op == OpWrite || e.op == OpDelete || e.op == OpAlter
	case OpDescribeConfigs:
		return e.op == OpAlterConfigs
	}
	return false
}

func (e *entry) appliesTo(s *Session) bool {
	return (e.principal == s.principal || e.principal == WildcardPrincipal) && s.hostMatches(e.host, e.addr)
}

// scanResource folds a pattern's entries for s into the decision: a matching DENY ends it.
func scanResource(r *resourceACLs, s *Session, op Operation, allow **Binding) (deny *Binding) {
	if d := scan(r.byPrincipal[s.principal], s, op, allow); d != nil {
		return d
	}
	return scan(r.wildcard, s, op, allow)
}

// scan folds one list of entries into the decision: a matching DENY ends it.
func scan(list []entry, s *Session, op Operation, allow **Binding) (deny *Binding) {
	for i := range list {
		e := &list[i]
		if !e.appliesTo(s) {
			continue
		}
		if e.matchesDeny(op) {
			return e.binding
		}
		if *allow == nil && e.matchesAllow(op) {
			*allow = e.binding
		}
	}
	return nil
}

// decide applies StandardAuthorizerData's rule to (op, resource name) for s: any matching DENY
// wins, else any matching ALLOW, else the resource "has ACLs" (any ACL at all matches its name)
// and is denied, else allowEveryone decides.
func (ix *index) decide(s *Session, op Operation, rt ResourceType, name string, allowEveryone bool) verdict {
	if int(rt) >= len(ix.byType) || rt < 0 || ix.byType[rt] == nil {
		return verdict{allowed: allowEveryone}
	}
	t := ix.byType[rt]
	var allow *Binding
	has := false
	if r := t.literal[name]; r != nil {
		has = true
		if d := scanResource(r, s, op, &allow); d != nil {
			return verdict{rule: d}
		}
	}
	if name != WildcardResource {
		if r := t.literal[WildcardResource]; r != nil {
			has = true
			if d := scanResource(r, s, op, &allow); d != nil {
				return verdict{rule: d}
			}
		}
	}
	for _, n := range t.prefixLens {
		if n > len(name) {
			break
		}
		if r := t.prefixed[name[:n]]; r != nil {
			has = true
			if d := scanResource(r, s, op, &allow); d != nil {
				return verdict{rule: d}
			}
		}
	}
	if allow != nil {
		return verdict{allowed: true, rule: allow}
	}
	return verdict{allowed: !has && allowEveryone}
}

// byResourceType is Authorizer.authorizeByResourceType's default method for s and op on type rt,
// after the "hardcode" check failed: a DENY on LITERAL "*" denies, an ALLOW on LITERAL "*" allows,
// otherwise some ALLOW (LITERAL or PREFIXED) not dominated by a DENY allows. A LITERAL ALLOW is
// dominated by a DENY on the same name or on a PREFIXED prefix of it; a PREFIXED ALLOW by a
// PREFIXED DENY on a prefix of it.
func (ix *index) byResourceType(s *Session, op Operation, rt ResourceType) bool {
	if int(rt) >= len(ix.byType) || rt < 0 || ix.byType[rt] == nil {
		return false
	}
	t := ix.byType[rt]
	var allows []*Binding
	denyLiteral := map[string]bool{}
	var denyPrefixes []string
	for i := range t.entries {
		e := &t.entries[i]
		if !e.appliesTo(s) || (e.op != op && e.op != OpAll) {
			continue
		}
		b := e.binding
		if e.perm == Deny {
			if b.PatternType == Literal {
				if b.ResourceName == WildcardResource {
					return false
				}
				denyLiteral[b.ResourceName] = true
			} else {
				denyPrefixes = append(denyPrefixes, b.ResourceName)
			}
			continue
		}
		if b.PatternType == Literal && b.ResourceName == WildcardResource {
			return true
		}
		allows = append(allows, b)
	}
	underPrefix := func(name string) bool {
		for _, p := range denyPrefixes {
			if len(p) <= len(name) && name[:len(p)] == p {
				return true
			}
		}
		return false
	}
	for _, b := range allows {
		if b.PatternType == Literal && denyLiteral[b.ResourceName] {
			continue
		}
		if underPrefix(b.ResourceName) {
			continue
		}
		return true
	}
	return false
}
