package api

import (
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/metadata"
	"github.com/muster-io/muster/internal/security"
)

// Authorization of the group coordinator APIs, as KafkaApis does it: each API checks its
// operation on the GROUP first (security.GroupOperation), then the topics it names
// (security.TopicOperation), always before anything that would reveal whether the group or topic
// exists; only the authorized subset of a request reaches the shards. The authorize* adapters
// (authz_*.go), one per API, are what Handlers binds to the wire.

// Req is what a coordinator adapter needs of one request besides its body.
type Req struct {
	// Meta is what the shard sees of the request (version, client).
	Meta coordinator.Meta
	// Check authorizes the request: the authorizer, the session, the API key. Without an
	// authorizer everything is allowed (security.AllowAll).
	Check security.Check
	// Host and Port are the advertised endpoint of the listener the request came in on, which
	// FindCoordinator answers (KafkaApis uses request.context.listenerName); "" keeps Self.
	Host string
	Port int32
}

// normalized fills what a caller left out: the API key, an authorizer that allows everything
// and an ANONYMOUS session.
func (r Req) normalized(key int16) Req {
	r.Check.API = key
	if r.Check.A == nil {
		r.Check.A = security.AllowAll{}
	}
	if r.Check.S == nil {
		r.Check.S = security.NewSession(security.Anonymous, r.Meta.ClientHost, "", security.Plaintext, "")
	}
	return r
}

// open reports whether every action is allowed (no authorizer): adapters then pass requests
// through without building subsets.
func (r Req) open() bool {
	_, ok := r.Check.A.(security.AllowAll)
	return ok
}

// withTopicFilter is r.Meta carrying the principal's DESCRIBE filter on topics, for operations
// that may refresh KIP-848 regex subscriptions (the filter is silent: a topic left out of a
// resolution is not a denial of a named resource).
func (r Req) withTopicFilter() coordinator.Meta {
	m := r.Meta
	if !r.open() {
		m.DescribableTopic = r.Check.DescribableTopics()
	}
	return m
}

// topicsAllowed authorizes op on each distinct topic name once (audited, as Kafka's
// filterByAuthorized) and returns the decision per name.
func (r Req) topicsAllowed(op security.Operation, names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		if _, done := out[n]; !done {
			out[n] = r.Check.Allowed(op, security.Topic, n)
		}
	}
	return out
}

// topicDecisions authorizes one operation on topics across a request that names the same topic
// many times (the groups of a describe), deciding (and auditing a denial of) each topic once.
type topicDecisions struct {
	r  Req
	op security.Operation
	m  map[string]bool
}

// all reports whether op is allowed on every name; every name is decided, as Kafka's
// filterByAuthorized does.
func (d *topicDecisions) all(names []string) bool {
	if d.m == nil {
		d.m = map[string]bool{}
	}
	ok := true
	for _, n := range names {
		allowed, done := d.m[n]
		if !done {
			allowed = d.r.Check.Allowed(d.op, security.Topic, n)
			d.m[n] = allowed
		}
		ok = ok && allowed
	}
	return ok
}

// allAllowed reports whether every decision is an allow.
func allAllowed(m map[string]bool) bool {
	for _, ok := range m {
		if !ok {
			return false
		}
	}
	return true
}

// topicName is the name a request topic is authorized by: its name, or from v10-style requests
// that name topics by id, the name of the id in the newest image. ok is false for an id the
// image does not know: such a topic answers UNKNOWN_TOPIC_ID before any authorization (topic
// ids are not secret), so it passes on to the API method untouched.
func topicName(im *metadata.Image, name string, id [16]byte, byID bool) (string, bool) {
	if !byID {
		return name, true
	}
	if im == nil || id == ([16]byte{}) {
		return "", false
	}
	return im.TopicName(id)
}
