package security

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// Action is one authorization question: may the session perform Op on the resource (Type, Name)?
type Action struct {
	Op   Operation
	Type ResourceType
	Name string
	// API is the request's API key, named in the audit line of a denial.
	API int16
	// Filter marks a check that filters a listing (ListGroups, all-topics Metadata, OffsetFetch
	// of all topics, authorized-operations probes): a denial is silent, not audited (Kafka's
	// logIfDenied=false).
	Filter bool
}

// Authorizer decides actions with Kafka's semantics. Implementations are safe for concurrent use
// and take no lock on the check path.
type Authorizer interface {
	// Authorize decides one action.
	Authorize(s *Session, a Action) bool
	// AuthorizeActions decides a batch, out[i] for as[i] (Kafka's Authorizer.authorize over a
	// list); out is reused when it has room.
	AuthorizeActions(s *Session, as []Action, out []bool) []bool
	// AuthorizeByResourceType reports whether s may perform op on at least one resource of type
	// rt (Authorizer.authorizeByResourceType; idempotent InitProducerId uses it with WRITE on
	// TOPIC).
	AuthorizeByResourceType(s *Session, op Operation, rt ResourceType) bool
	// AuthorizedOperations is the KIP-430 bitfield of the supported operations of rt that s may
	// perform on name (bit 1<<op per allowed operation). Its checks are never audited.
	AuthorizedOperations(s *Session, rt ResourceType, name string) int32
}

// AllowAll is the authorizer of a broker without authorizer.class.name: every action is allowed
// and authorized-operations bitfields list every supported operation.
type AllowAll struct{}

// Authorize implements Authorizer.
func (AllowAll) Authorize(*Session, Action) bool { return true }

// AuthorizeActions implements Authorizer.
func (AllowAll) AuthorizeActions(_ *Session, as []Action, out []bool) []bool {
	out = out[:0]
	for range as {
		out = append(out, true)
	}
	return out
}

// AuthorizeByResourceType implements Authorizer.
func (AllowAll) AuthorizeByResourceType(*Session, Operation, ResourceType) bool { return true }

// AuthorizedOperations implements Authorizer.
func (AllowAll) AuthorizedOperations(_ *Session, rt ResourceType, _ string) int32 {
	return AllOperationsBits(rt)
}

// Check is one request's view of the authorizer: its session and API key (for audit lines).
// Adapters build one per request and call its methods in Kafka's order: authorize before
// looking a resource up, so existence is hidden from callers without DESCRIBE.
type Check struct {
	A   Authorizer
	S   *Session
	API int16
}

// Allowed authorizes op on a resource the request names explicitly; a denial is audited.
func (c Check) Allowed(op Operation, rt ResourceType, name string) bool {
	return c.A.Authorize(c.S, Action{Op: op, Type: rt, Name: name, API: c.API})
}

// Visible authorizes op on a resource for a listing; a denial is silent (the resource is left
// out of the answer without a trace).
func (c Check) Visible(op Operation, rt ResourceType, name string) bool {
	return c.A.Authorize(c.S, Action{Op: op, Type: rt, Name: name, API: c.API, Filter: true})
}

// Cluster authorizes op on the CLUSTER resource; a denial is audited.
func (c Check) Cluster(op Operation) bool { return c.Allowed(op, Cluster, ClusterName) }

// ClusterOrEach is Kafka's "CLUSTER op, else op on each resource" shortcut (CreateTopics,
// Metadata auto-creation): the cluster check is silent (a denial there is not final).
func (c Check) ClusterOrEach(op Operation, rt ResourceType, name string) bool {
	return c.Visible(op, Cluster, ClusterName) || c.Allowed(op, rt, name)
}

// ByResourceType is Authorizer.AuthorizeByResourceType for this request.
func (c Check) ByResourceType(op Operation, rt ResourceType) bool {
	return c.A.AuthorizeByResourceType(c.S, op, rt)
}

// Operations is the KIP-430 bitfield for (rt, name) when requested, else
// OmittedAuthorizedOperations.
func (c Check) Operations(requested bool, rt ResourceType, name string) int32 {
	if !requested {
		return OmittedAuthorizedOperations
	}
	return c.A.AuthorizedOperations(c.S, rt, name)
}

// FilterNames keeps the names on which op is allowed, silently, in order (ListGroups, OffsetFetch
// of all topics); names is reused.
func (c Check) FilterNames(op Operation, rt ResourceType, names []string) []string {
	out := names[:0]
	for _, n := range names {
		if c.Visible(op, rt, n) {
			out = append(out, n)
		}
	}
	return out
}

// Denied returns nil when op on (rt, name) is allowed, else the type's authorization error
// (DeniedError): the answer an unauthorized caller gets whether or not the resource exists.
func (c Check) Denied(op Operation, rt ResourceType, name string) *kerr.Error {
	if c.Allowed(op, rt, name) {
		return nil
	}
	return DeniedError(rt)
}

// DeniedError is the authorization error of a resource type: TOPIC_AUTHORIZATION_FAILED (29),
// GROUP_AUTHORIZATION_FAILED (30), CLUSTER_AUTHORIZATION_FAILED (31),
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), DELEGATION_TOKEN_AUTHORIZATION_FAILED (65).
func DeniedError(rt ResourceType) *kerr.Error {
	switch rt {
	case Topic:
		return kerr.TopicAuthorizationFailed
	case Group:
		return kerr.GroupAuthorizationFailed
	case TransactionalID:
		return kerr.TransactionalIDAuthorizationFailed
	case DelegationToken:
		return kerr.DelegationTokenAuthorizationFailed
	}
	return kerr.ClusterAuthorizationFailed
}

// DeniedMessage is Kafka's message for a denial on a named resource ("Not authorized to access
// group: g"), naming the resource so an operator sees which ACL is missing.
func DeniedMessage(rt ResourceType, name string) string {
	switch rt {
	case Topic:
		return "Not authorized to access topics: [" + name + "]"
	case Group:
		return "Not authorized to access group: " + name
	case TransactionalID:
		return "Transactional Id authorization failed."
	case Cluster:
		return "Cluster authorization failed."
	}
	return "Authorization failed."
}
