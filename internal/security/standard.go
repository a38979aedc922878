package security

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
)

// AuthorizerClassNames are the authorizer.class.name values that enable the ACL authorizer:
// Kafka's KRaft StandardAuthorizer, its ZooKeeper-era predecessor (same semantics) and muster's
// short alias.
var AuthorizerClassNames = []string{
	"org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"kafka.security.authorizer.AclAuthorizer",
	"acl",
}

// IsAuthorizerClass reports whether name enables the ACL authorizer ("" disables it).
func IsAuthorizerClass(name string) bool {
	for _, n := range AuthorizerClassNames {
		if n == name {
			return true
		}
	}
	return false
}

// AuthorizerConfig is what StandardAuthorizer reads from the broker config.
type AuthorizerConfig struct {
	// SuperUsers is super.users: principals that bypass every check.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found: a resource without any ACL is
	// open to everyone (the default false denies it).
	AllowEveryoneIfNoACLFound bool
	// Log receives the audit lines of denials (rate-limited); nil: none.
	Log *slog.Logger
	// OnDenied, if set, is called for every denial (metrics).
	OnDenied func(rt ResourceType)
}

// ParseSuperUsers splits super.users: principals separated by semicolons, trimmed.
func ParseSuperUsers(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// StandardAuthorizer is Kafka's StandardAuthorizer: ACLs kept in a Store and indexed in an
// immutable snapshot that checks read without locking.
type StandardAuthorizer struct {
	cfg   AuthorizerConfig
	super map[string]bool
	store Store
	audit *auditLog

	mu sync.Mutex // serializes changes (each writes the store, then publishes a new index)
	ix atomic.Pointer[index]
}

// NewStandardAuthorizer loads the ACLs of st.
func NewStandardAuthorizer(cfg AuthorizerConfig, st Store) (*StandardAuthorizer, error) {
	a := &StandardAuthorizer{cfg: cfg, super: map[string]bool{}, store: st, audit: &auditLog{log: cfg.Log}}
	for _, p := range cfg.SuperUsers {
		a.super[p] = true
	}
	stored, err := st.LoadACLs()
	if err != nil {
		return nil, fmt.Errorf("loading ACLs: %w", err)
	}
	m := make(map[[16]byte]*Binding, len(stored))
	for _, sb := range stored {
		b := sb.Binding
		m[sb.ID] = &b
	}
	a.ix.Store(buildIndex(m))
	return a, nil
}

// Authorize implements Authorizer.
func (a *StandardAuthorizer) Authorize(s *Session, act Action) bool {
	if a.super[s.PrincipalString()] {
		return true
	}
	v := a.ix.Load().decide(s, act.Op, act.Type, act.Name, a.cfg.AllowEveryoneIfNoACLFound)
	if !v.allowed {
		if a.cfg.OnDenied != nil && !act.Filter {
			a.cfg.OnDenied(act.Type)
		}
		if !act.Filter {
			a.audit.denied(s, act, v.rule)
		}
	}
	return v.allowed
}

// AuthorizeActions implements Authorizer.
func (a *StandardAuthorizer) AuthorizeActions(s *Session, as []Action, out []bool) []bool {
	out = out[:0]
	for _, act := range as {
		out = append(out, a.Authorize(s, act))
	}
	return out
}

// AuthorizeByResourceType implements Authorizer.
func (a *StandardAuthorizer) AuthorizeByResourceType(s *Session, op Operation, rt ResourceType) bool {
	if a.super[s.PrincipalString()] {
		return true
	}
	ix := a.ix.Load()
	if ix.decide(s, op, rt, "hardcode", a.cfg.AllowEveryoneIfNoACLFound).allowed {
		return true
	}
	return ix.byResourceType(s, op, rt)
}

// AuthorizedOperations implements Authorizer.
func (a *StandardAuthorizer) AuthorizedOperations(s *Session, rt ResourceType, name string) int32 {
	if a.super[s.PrincipalString()] {
		return AllOperationsBits(rt)
	}
	ix := a.ix.Load()
	var bits int32
	for _, op := range SupportedOperations(rt) {
		if ix.decide(s, op, rt, name, a.cfg.AllowEveryoneIfNoACLFound).allowed {
			bits |= 1 << op
		}
	}
	return bits
}

// Count is the number of ACLs held.
func (a *StandardAuthorizer) Count() int { return len(a.ix.Load().bindings) }

// CreateACLs adds bindings (CreateAcls). errs[i] is nil for a binding created or already present
// (creation is idempotent), an *InvalidACLError for one that fails validation, or the store's
// error. The valid ones are written in one durable batch and apply to every later check.
func (a *StandardAuthorizer) CreateACLs(bs []Binding) []error {
	errs := make([]error, len(bs))
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.ix.Load()
	have := make(map[Binding]bool, len(cur.bindings))
	for _, b := range cur.bindings {
		have[*b] = true
	}
	var add []StoredBinding
	for i, b := range bs {
		if err := b.Validate(); err != nil {
			errs[i] = &InvalidACLError{Err: err}
			continue
		}
		if have[b] {
			continue
		}
		have[b] = true
		add = append(add, StoredBinding{ID: newID(), Binding: b})
	}
	if len(add) == 0 {
		return errs
	}
	if err := a.store.ChangeACLs(add, nil); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs
	}
	next := make(map[[16]byte]*Binding, len(cur.bindings)+len(add))
	for id, b := range cur.bindings {
		next[id] = b
	}
	for _, sb := range add {
		b := sb.Binding
		next[sb.ID] = &b
	}
	a.ix.Store(buildIndex(next))
	return errs
}

// DeleteACLs removes every binding each filter matches (DeleteAcls): deleted[i] lists what
// filters[i] removed. A binding matched by several filters is listed under each. err is the
// store's error (nothing was deleted then).
func (a *StandardAuthorizer) DeleteACLs(filters []Filter) (deleted [][]Binding, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.ix.Load()
	deleted = make([][]Binding, len(filters))
	gone := map[[16]byte]bool{}
	var remove [][16]byte
	for i, f := range filters {
		for id, b := range cur.bindings {
			if f.Matches(*b) {
				deleted[i] = append(deleted[i], *b)
				if !gone[id] {
					gone[id] = true
					remove = append(remove, id)
				}
			}
		}
		sortBindings(deleted[i])
	}
	if len(remove) == 0 {
		return deleted, nil
	}
	if err := a.store.ChangeACLs(nil, remove); err != nil {
		return nil, err
	}
	next := make(map[[16]byte]*Binding, len(cur.bindings))
	for id, b := range cur.bindings {
		if !gone[id] {
			next[id] = b
		}
	}
	a.ix.Store(buildIndex(next))
	return deleted, nil
}

// DescribeACLs lists the bindings f matches, sorted by resource then entry.
func (a *StandardAuthorizer) DescribeACLs(f Filter) []Binding {
	var out []Binding
	for _, b := range a.ix.Load().bindings {
		if f.Matches(*b) {
			out = append(out, *b)
		}
	}
	sortBindings(out)
	return out
}

// InvalidACLError is a binding CreateAcls rejects with INVALID_REQUEST.
type InvalidACLError struct{ Err error }

func (e *InvalidACLError) Error() string { return e.Err.Error() }

func newID() [16]byte {
	var id [16]byte
	rand.Read(id[:])
	return id
}
