package coordtest

import (
	"log/slog"
	"math/rand"
	"sort"
	"strconv"
	"time"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

// T0 is the harness clock's start: a fixed instant, so outputs are reproducible.
var T0 = time.UnixMilli(1_700_000_000_000)

// Harness drives one shard's coordinator.State synchronously, as the engine would but without
// goroutines, a store or a wall clock: each Do runs one operation in its own batch, "commits"
// the batch to an in-memory log (Log) and releases its replies; Advance moves the manual clock
// and fires the timers now due, in one batch. With Topics set, the shard gets the topic set's
// image before every step, as the engine hands it the newest metadata image.
type Harness struct {
	St     *coordinator.State
	Cfg    *coordinator.Config
	Clock  *ManualClock
	IDs    *SeqIDs
	Topics *Topics // nil: the shard knows no topics and skips topic checks
	// Log is every record committed so far, in write order.
	Log []coordinator.Record
	// Meta is the request metadata Do uses.
	Meta coordinator.Meta
	// GroupConfigs is the snapshot of the groups' dynamic configs handed to the shard before
	// every step, as the engine's Refresh hands it the adapters' newest one (nil: none).
	GroupConfigs *coordinator.GroupConfigs
}

// New builds a harness on shard 0 with cfg (Shards defaults to 1) at T0, loaded empty.
func New(cfg *coordinator.Config) *Harness {
	if cfg.Shards == 0 {
		cfg.Shards = 1
	}
	cid := "client"
	h := &Harness{Cfg: cfg, Clock: NewManualClock(T0), IDs: &SeqIDs{},
		Meta: coordinator.Meta{ClientID: &cid, ClientHost: "/127.0.0.1"}}
	h.St = coordinator.NewState(0, cfg, slog.New(slog.DiscardHandler), h.IDs)
	h.St.OnLoaded(h.Clock.Now()) // an empty shard's load, as the engine finishes every load
	h.commit()
	return h
}

// WithTopics gives the shard a topic set (created empty when t is nil) and returns it.
func (h *Harness) WithTopics(t *Topics) *Topics {
	if t == nil {
		t = NewTopics()
	}
	h.Topics = t
	return t
}

// Result is one call's answer as the harness saw it; it implements coordinator.Waiter.
type Result[T any] struct {
	Resp T
	Err  error
	set  bool
	done bool
}

// Set implements coordinator.Waiter.
func (r *Result[T]) Set(resp T, err error) {
	if !r.set {
		r.set, r.Resp, r.Err = true, resp, err
	}
}

// Release implements coordinator.Pending.
func (r *Result[T]) Release() { r.done = true }

// Fail implements coordinator.Pending.
func (r *Result[T]) Fail(err error) {
	var zero T
	r.Resp, r.Err, r.done = zero, err, true
}

// Done reports whether the call was answered (a JoinGroup waits for its rebalance).
func (r *Result[T]) Done() bool { return r.done }

// Do runs op as one call with h.Meta; a deferred answer arrives with a later Do or Advance.
func Do[T any](h *Harness, op func(*coordinator.State, *coordinator.Call[T])) *Result[T] {
	return DoMeta(h, h.Meta, op)
}

// DoMeta is Do with explicit request metadata.
func DoMeta[T any](h *Harness, meta coordinator.Meta, op func(*coordinator.State, *coordinator.Call[T])) *Result[T] {
	r := &Result[T]{}
	c := coordinator.NewCall(meta, coordinator.Waiter[T](r))
	h.Step(func(st *coordinator.State) { op(st, c) })
	return r
}

// Step runs fn on the shard as one batch: time and topics set, effects committed to Log and
// replies released.
func (h *Harness) Step(fn func(st *coordinator.State)) {
	h.refresh()
	h.St.SetNow(h.Clock.Now())
	fn(h.St)
	h.commit()
}

// Advance moves the clock by d and runs every timer now due, in one batch.
func (h *Harness) Advance(d time.Duration) {
	h.Clock.Advance(d)
	h.refresh()
	h.St.FireTimers(h.Clock.Now())
	h.commit()
}

// refresh hands the shard the topic image and the group configs, as the engine's Refresh does.
func (h *Harness) refresh() {
	if h.Topics != nil {
		h.St.SetImage(h.Topics.Image())
	}
	if h.St.GroupConfigs != h.GroupConfigs {
		h.St.SetGroupConfigs(h.GroupConfigs)
	}
}

func (h *Harness) commit() {
	e := h.St.TakeEffects()
	h.Log = append(h.Log, e.Records...)
	for _, p := range e.Replies {
		p.Release()
	}
}

// Latest returns the live records: the last value per key, tombstones dropped, in random order
// (seeded), as a store's load could present them.
func (h *Harness) Latest(seed int64) []coordinator.Record {
	return Latest(h.Log, seed)
}

// Latest is the live content of a record log (see Harness.Latest).
func Latest(log []coordinator.Record, seed int64) []coordinator.Record {
	last := map[string]coordinator.Record{}
	for _, r := range log {
		last[string(r.Key)] = r
	}
	var out []coordinator.Record
	for _, r := range last {
		if r.Value != nil {
			out = append(out, r)
		}
	}
	rnd := rand.New(rand.NewSource(seed))
	rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Reload builds a fresh State by replaying Latest(seed), as a restart would, without re-arming
// its timers (see Restart).
func (h *Harness) Reload(seed int64) (*coordinator.State, error) {
	return Replay(h.St.Shard, h.Cfg, h.Latest(seed))
}

// Restart replaces the harness state by Reload(seed) and finishes the load (timers re-armed,
// Kafka's onLoaded), as a shard load after a crash would; the log is kept.
func (h *Harness) Restart(seed int64) error {
	st, err := h.Reload(seed)
	if err != nil {
		return err
	}
	st.IDs = h.IDs
	h.St = st
	h.refresh()
	h.St.OnLoaded(h.Clock.Now())
	h.commit()
	return nil
}

// Replay builds a fresh State for shard from recs, as a shard load does (records in any order;
// the last value per key wins); its timers are not armed.
func Replay(shard int32, cfg *coordinator.Config, recs []coordinator.Record) (*coordinator.State, error) {
	st := coordinator.NewState(shard, cfg, slog.New(slog.DiscardHandler), &SeqIDs{})
	for _, r := range recs {
		if err := st.Replay(r); err != nil {
			return nil, err
		}
	}
	st.Loading = false
	return st, nil
}

// DurableView is a deterministic description of a State's durable content: every group's
// Durable() value, every committed offset and every pending transactional offset. A group with no durable content of its own and no
// offsets (a classic group before its first record, a simple group whose offsets are gone) is
// left out: a restart does not rebuild it, and it holds nothing a restart could lose.
func DurableView(st *coordinator.State) map[string]any {
	out := map[string]any{}
	for id, g := range st.Groups {
		if d, ok := g.(interface{ HasDurableContent() bool }); ok && !d.HasDurableContent() && !st.Offsets.HasOffsets(id) && !st.TxnOffsets.HasGroup(id) {
			continue
		}
		out["group/"+id] = struct {
			Type coordinator.GroupType
			D    any
		}{g.Type(), g.Durable()}
	}
	for _, g := range st.Offsets.GroupIDs() {
		for _, t := range st.Offsets.Topics(g) {
			for _, p := range st.Offsets.Partitions(g, t) {
				v, _ := st.Offsets.Get(g, t, p)
				out["offset/"+g+"/"+t+"/"+strconv.Itoa(int(p))] = v
			}
		}
	}
	for g, events := range st.HistoryView() {
		out["history/"+g] = events
	}
	for _, g := range sortedGroups(st) {
		for _, tp := range st.TxnOffsets.Partitions(g) {
			for _, pid := range st.TxnOffsets.Producers(g, tp.Topic, tp.Partition) {
				v, _ := st.TxnOffsets.Get(g, tp.Topic, tp.Partition, pid)
				out["pending/"+g+"/"+tp.Topic+"/"+strconv.Itoa(int(tp.Partition))+"/"+strconv.FormatInt(pid, 10)] = *v
			}
		}
	}
	return out
}

// Config is the coordinator configuration of Kafka's defaults with key=value overrides; it
// panics on a bad override.
func Config(overrides ...string) *coordinator.Config {
	return coordinator.ConfigFrom(config.Defaults(overrides...))
}

func sortedGroups(st *coordinator.State) []string {
	out := make([]string, 0, len(st.Groups))
	for id := range st.Groups {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
