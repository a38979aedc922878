package coordinator

import (
	"log/slog"
	"time"

	"github.com/muster-io/muster/internal/metadata"
)

// GroupType is the kind of a group, as ListGroups v5 names it.
type GroupType string

// The group types.
const (
	TypeClassic  GroupType = "classic"
	TypeConsumer GroupType = "consumer"
	TypeStreams  GroupType = "streams"
)

// Group is what every group type answers for the offset, admin and list paths (Kafka's Group
// interface).
type Group interface {
	ID() string
	Type() GroupType
	// StateName is Kafka's state string ("Stable", "PreparingRebalance", "Empty", "NotReady", ...).
	StateName() string
	// ProtocolType as ListGroups reports it ("consumer", "streams", a classic group's own, or "").
	ProtocolType() string
	IsEmpty() bool
	// IsSubscribedToTopic decides OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC and offset expiry
	// (Kafka's Group.isSubscribedToTopic).
	IsSubscribedToTopic(topic string) bool
	// ValidateOffsetCommit returns a kerr error or nil (Kafka's Group.validateOffsetCommit).
	ValidateOffsetCommit(st *State, c *CommitIdentity) error
	// ValidateOffsetFetch validates a v9+ member-bound fetch (memberID non-empty or epoch ≥ 0).
	ValidateOffsetFetch(st *State, memberID string, memberEpoch int32) error
	// ValidateOffsetDelete returns a group-level kerr error or nil.
	ValidateOffsetDelete() error
	// ValidateDeleteGroup returns a kerr error or nil.
	ValidateDeleteGroup() error
	// WriteTombstones writes tombstones for all of the group's own records (not its offsets),
	// in Kafka's order, through st.Write.
	WriteTombstones(st *State)
	// OffsetExpiryBase returns the base time for offset expiry of a partition committed at
	// commitTime, and false when offsets of this group must not expire now (Kafka's
	// Group.offsetExpirationCondition).
	OffsetExpiryBase(commitTime time.Time) (time.Time, bool)
	// Durable is a deterministic value describing exactly the group's durable state, used by the
	// replay-equivalence property (a fresh shard replaying all records must produce equal values).
	Durable() any
}

// CommitIdentity is who commits offsets and how (OffsetCommit / TxnOffsetCommit).
type CommitIdentity struct {
	MemberID          string
	InstanceID        *string
	GenerationOrEpoch int32
	APIVersion        int16
	Transactional     bool
	// Partitions are the request's partitions by topic name (KIP-1251 checks a commit with an
	// older member epoch per partition); nil when unknown.
	Partitions map[string][]int32
}

// IDSource makes the random parts of member ids. The core never reads randomness itself: the
// engine injects a crypto/rand source, tests a deterministic one.
type IDSource interface {
	NewUUID() [16]byte
}

// State is one shard's deterministic state machine: groups, committed offsets, timers (Kafka's
// GroupCoordinatorShard). It is owned by one goroutine (the engine's shard loop or a test
// driver) and never reads the clock, randomness or the network: time comes in with SetNow,
// topic metadata as an immutable Image, member-id randomness from IDs. Durable parts change
// only by replaying records (Write replays at once and queues the record in the Effects);
// in-memory parts (pending joins, timers) change directly.
type State struct {
	Shard   int32
	Cfg     *Config
	Now     time.Time
	Log     *slog.Logger
	Groups  map[string]Group
	Offsets *Offsets
	// TxnOffsets are the pending transactional offsets (offsets_txn.go).
	TxnOffsets *TxnOffsets
	// History is each group's rebalance history (hard state: RecRebalanceHistory records); it
	// outlives a group's change of type and is deleted with the group.
	History map[string]*groupHistory
	Timers  *Timers
	Metrics *ShardMetrics
	// Image is the newest topic metadata the driver handed in (nil: no topics are known, and
	// topic checks are skipped).
	Image *metadata.Image
	// GroupConfigs are the groups' dynamic configs the driver handed in (nil: none).
	GroupConfigs *GroupConfigs
	IDs          IDSource

	// Loading is true while records are replayed from the store (not from a live operation).
	Loading bool

	out Effects // what operations produced since the driver last took it
}

// NewState builds an empty shard state.
func NewState(shard int32, cfg *Config, log *slog.Logger, ids IDSource) *State {
	if log == nil {
		log = slog.Default()
	}
	return &State{
		Shard:      shard,
		Cfg:        cfg,
		Log:        log.With("shard", shard),
		Groups:     map[string]Group{},
		Offsets:    newOffsets(),
		TxnOffsets: newTxnOffsets(),
		History:    map[string]*groupHistory{},
		Timers:     newTimers(),
		Metrics:    &ShardMetrics{},
		IDs:        ids,
	}
}

// SetNow sets the shard time of the operations that follow.
func (st *State) SetNow(now time.Time) { st.Now = now }

// SetImage hands the shard a new topic metadata image (Kafka's onNewMetadataImage): consumer
// groups that may see a difference refresh their KIP-1101 hash and regexes on their next
// heartbeat.
func (st *State) SetImage(im *metadata.Image) {
	old := st.Image
	st.Image = im
	if old != nil && old != im {
		changed := changedTopics(old, im)
		markTopicsChanged(st, changed)
		markShareTopicsChanged(st, changed)
	}
}

// AddReply implements Replies: p is released after the records written before it.
func (st *State) AddReply(p Pending) { st.out.Replies = append(st.out.Replies, p) }

// TakeEffects returns what was produced since the last call and starts a new, empty set.
func (st *State) TakeEffects() Effects {
	e := st.out
	st.out = Effects{}
	return e
}

// growRecords makes room for n more records in the Effects.
func (st *State) growRecords(n int) {
	if r := st.out.Records; cap(r)-len(r) < n {
		st.out.Records = append(make([]Record, 0, max(len(r)+n, 2*cap(r))), r...)
	}
}

// DiscardEffects drops what was produced, keeping the buffers (benchmarks of one handler).
func (st *State) DiscardEffects() {
	st.out.Records, st.out.Replies = st.out.Records[:0], st.out.Replies[:0]
}

// Write replays rec into the state at once and adds it to the Effects, so the rest of the
// operation sees its effect. A record that fails to replay is a programming error in the handler
// that built it; it is logged and dropped so the shard keeps serving.
func (st *State) Write(rec Record) {
	if err := st.replay(rec); err != nil {
		st.Log.Error("coordinator: handler produced a record that does not replay", "err", err)
		return
	}
	st.out.Records = append(st.out.Records, rec)
}

// removeGroup drops a group none of whose own records is left. Committed or pending
// transactional offsets that remain keep a simple classic group in its place, as a load
// replaying them builds one (Kafka's OffsetMetadataManager.replay), so the live shard and a
// reloaded one agree.
func (st *State) removeGroup(id string) {
	delete(st.Groups, id)
	if st.hasAnyOffsets(id) {
		st.Groups[id] = newSimpleClassicGroup(id)
	}
}

// NextDeadline is the earliest armed timer's deadline.
func (st *State) NextDeadline() (time.Time, bool) { return st.Timers.Next() }

// FireTimers runs every timer due at now, in deadline order (timers armed by a firing timer run
// too when they are due). recovered reports a timer that panicked (a programming error): it is
// logged and the shard goes on.
func (st *State) FireTimers(now time.Time) {
	st.Now = now
	for {
		tm := st.Timers.popDue(now)
		if tm == nil {
			return
		}
		st.runTimer(tm)
	}
}

func (st *State) runTimer(tm *timer) {
	defer func() {
		if r := recover(); r != nil {
			st.Log.Error("coordinator: timer panicked", "timer", tm.key, "panic", r)
		}
	}()
	tm.fn(st)
}

// Replay applies one record read from the store while the shard loads (records come in key
// order, not write order; the last value per key is all a load sees). OnLoaded ends the load.
func (st *State) Replay(r Record) error {
	st.Loading = true
	return st.replay(r)
}

// OnLoaded finishes a load (Kafka's GroupMetadataManager.onLoaded), in this order: classic
// members' session timers are re-armed and groups over group.max.size rebalance; consumer
// members' session and rebalance timers are re-armed; the offset expiry sweep is scheduled;
// streams members' session and rebalance timers are re-armed. Timers armed for the same instant
// fire in this order.
func (st *State) OnLoaded(now time.Time) {
	st.Now = now
	st.Loading = false
	onLoadedClassic(st)
	onLoadedConsumer(st)
	scheduleExpiry(st)
	onLoadedStreams(st)
	onLoadedShare(st)
}

// Group returns a group by id.
func (st *State) Group(id string) (Group, bool) {
	g, ok := st.Groups[id]
	return g, ok
}

// ShardMetrics are per-shard counters, summed by the metrics collector.
type ShardMetrics struct {
	OffsetCommits       int64
	OffsetExpirations   int64
	OffsetDeletions     int64
	CompletedRebalances int64
	ConsumerRebalances  int64
	StreamsRebalances   int64
	// Rebalances counts group epoch bumps (classic generation bumps) by group type and main
	// cause.
	Rebalances map[RebalanceKey]int64
	ShareMetrics
}

// ShardFor is Kafka's group → __consumer_offsets partition rule (GroupCoordinatorService
// .partitionFor): abs(Java String.hashCode) mod N, with Utils.abs mapping MinInt32 to 0.
func ShardFor(groupID string, shards int32) int32 {
	// Java's String.hashCode over UTF-16 code units, computed without building the UTF-16 slice.
	var h int32
	for _, r := range groupID {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % shards
}

// ShardStats is what the metrics collector reads of a shard: its counters, its number of
// committed offsets and its groups by type and state.
type ShardStats struct {
	Metrics ShardMetrics
	Offsets int
	Groups  map[GroupType]map[string]int
}

// Stats reads the shard's ShardStats.
func Stats() func(st *State, c *Call[ShardStats]) {
	return func(st *State, c *Call[ShardStats]) {
		s := ShardStats{Metrics: *st.Metrics, Offsets: st.Offsets.Count(), Groups: map[GroupType]map[string]int{}}
		s.Metrics.Rebalances = make(map[RebalanceKey]int64, len(st.Metrics.Rebalances))
		for k, n := range st.Metrics.Rebalances {
			s.Metrics.Rebalances[k] = n
		}
		for _, g := range st.Groups {
			if s.Groups[g.Type()] == nil {
				s.Groups[g.Type()] = map[string]int{}
			}
			s.Groups[g.Type()][g.StateName()]++
		}
		c.Reply(st, s)
	}
}
