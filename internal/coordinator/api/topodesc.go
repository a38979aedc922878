package api

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/streams/topodesc"
)

// Defaults of the KIP-1331 solicitation timers (back-off 30 s doubling to 1 h; in-flight tracker
// 30 s).
const (
	DefaultTopologyDescriptionBackoffInitial = 30 * time.Second
	DefaultTopologyDescriptionBackoffMax     = time.Hour
	DefaultTopologyDescriptionInflight       = 30 * time.Second
)

// TopologyDescriptionCounters count plugin outcomes (KIP-1331 sensors
// streams-group-topology-description-*). They are cumulative and safe for concurrent use.
type TopologyDescriptionCounters struct {
	SetSuccess, SetError       atomic.Int64
	GetSuccess, GetError       atomic.Int64
	DeleteSuccess, DeleteError atomic.Int64
	CleanupCycles              atomic.Int64
	CleanupEligible            atomic.Int64
}

// TopologyDescriptions is the broker side of KIP-1331 (Kafka's
// StreamsGroupTopologyDescriptionManager; see docs/kip-1331.md): the configured plugin and the
// in-memory solicitation state (per-group transient-failure back-off and in-flight tracker). The
// persisted epochs (StoredTopologyEpoch, LastFailedTopologyEpoch) live in each StreamsGroup.
//
// Time is always passed in (a shard's st.Now), never read here.
type TopologyDescriptions struct {
	Plugin topodesc.Plugin
	// BackoffInitial is the first transient-failure back-off window; each consecutive transient
	// failure at the same topology epoch doubles it up to BackoffMax.
	BackoffInitial, BackoffMax time.Duration
	// Inflight is how long a solicitation keeps other heartbeats of the group from being
	// solicited too (the push it asked for is in flight).
	Inflight time.Duration
	Log      *slog.Logger
	Counters TopologyDescriptionCounters

	mu       sync.Mutex
	backoff  map[string]tdBackoff
	inflight map[string]tdInflight
	epochs   map[string]*tdEpochs // previous epochs held by the plugin (multi-epoch)

	cleanup tdCleanup
}

type tdBackoff struct {
	epoch    int32
	failures int // consecutive transient failures at epoch
	next     time.Time
}

type tdInflight struct {
	epoch int32
	until time.Time
}

// NewTopologyDescriptions wraps plugin (non-nil); zero durations take the defaults.
func NewTopologyDescriptions(plugin topodesc.Plugin, backoffInitial, backoffMax, inflight time.Duration, log *slog.Logger) *TopologyDescriptions {
	if backoffInitial <= 0 {
		backoffInitial = DefaultTopologyDescriptionBackoffInitial
	}
	if backoffMax <= 0 {
		backoffMax = DefaultTopologyDescriptionBackoffMax
	}
	if backoffMax < backoffInitial {
		backoffMax = backoffInitial
	}
	if inflight <= 0 {
		inflight = DefaultTopologyDescriptionInflight
	}
	if log == nil {
		log = slog.Default()
	}
	return &TopologyDescriptions{Plugin: plugin, BackoffInitial: backoffInitial, BackoffMax: backoffMax, Inflight: inflight,
		Log: log, backoff: map[string]tdBackoff{}, inflight: map[string]tdInflight{}}
}

// ShouldSolicit decides TopologyDescriptionRequired for one heartbeat (the KIP-1331 solicitation
// rule): true iff the group has a topology, StoredTopologyEpoch ≠ current, LastFailedTopologyEpoch
// ≠ current, no transient back-off window for the current epoch is open, and no solicitation for
// the current epoch is still in flight. A true answer opens the in-flight window, so concurrent
// heartbeats of the group are not all asked.
func (td *TopologyDescriptions) ShouldSolicit(group string, s coordinator.TopologyDescriptionState) bool {
	if !s.Valid || s.Stale || s.Current < 0 || s.Stored == s.Current || s.LastFailed == s.Current {
		return false
	}
	td.mu.Lock()
	defer td.mu.Unlock()
	if b, ok := td.backoff[group]; ok {
		if b.epoch == s.Current && s.Now.Before(b.next) {
			return false
		}
		if b.epoch != s.Current {
			delete(td.backoff, group) // a topology-epoch advance clears the back-off
		}
	}
	if f, ok := td.inflight[group]; ok && f.epoch == s.Current && s.Now.Before(f.until) {
		return false
	}
	td.inflight[group] = tdInflight{epoch: s.Current, until: s.Now.Add(td.Inflight)}
	return true
}

// pushSettled clears the in-flight entry of (group, epoch) and the back-off (success and
// permanent failure).
func (td *TopologyDescriptions) pushSettled(group string, epoch int32) {
	td.mu.Lock()
	defer td.mu.Unlock()
	if f, ok := td.inflight[group]; ok && f.epoch == epoch {
		delete(td.inflight, group)
	}
	delete(td.backoff, group)
}

// pushFailedTransiently arms (or extends) the back-off of (group, epoch): BackoffInitial after the
// first consecutive transient failure, doubling per further one, capped at BackoffMax. It returns
// the end of the window.
func (td *TopologyDescriptions) pushFailedTransiently(group string, epoch int32, now time.Time) time.Time {
	td.mu.Lock()
	defer td.mu.Unlock()
	if f, ok := td.inflight[group]; ok && f.epoch == epoch {
		delete(td.inflight, group)
	}
	b := td.backoff[group]
	if b.epoch == epoch && !b.next.IsZero() {
		b.failures++
	} else {
		b = tdBackoff{epoch: epoch}
	}
	b.next = now.Add(td.backoffDelay(b.failures))
	td.backoff[group] = b
	return b.next
}

func (td *TopologyDescriptions) backoffDelay(failures int) time.Duration {
	d := td.BackoffInitial
	for i := 0; i < failures && d < td.BackoffMax; i++ {
		d *= 2
	}
	if d > td.BackoffMax {
		d = td.BackoffMax
	}
	return d
}

// forget drops a group's in-memory state (group deleted).
func (td *TopologyDescriptions) forget(group string) {
	td.mu.Lock()
	defer td.mu.Unlock()
	delete(td.inflight, group)
	delete(td.backoff, group)
	delete(td.epochs, group)
}

// maybeSolicit sets TopologyDescriptionRequired on a successful heartbeat response (KIP-1331;
// Kafka's StreamsGroupTopologyDescriptionManager.maybeSetTopologyDescriptionRequired): v1+ requests
// only, never for a leave (epoch < 0) or an error response, and only when a plugin is configured
// and ShouldSolicit agrees.
func (td *TopologyDescriptions) maybeSolicit(meta coordinator.Meta, req *kmsg.StreamsGroupHeartbeatRequest, out *coordinator.StreamsHeartbeatResult) {
	if meta.APIVersion < 1 || req.MemberEpoch < 0 || out == nil || out.Response == nil || out.Response.ErrorCode != 0 {
		return
	}
	if td.ShouldSolicit(req.Group, out.TopologyDescription) {
		out.Response.TopologyDescriptionRequired = true
	}
	td.maybeRetirePrevious(req.Group, out.TopologyDescription)
}
