package coordinator

import (
	"log/slog"
	"math/rand"
	"strconv"
	"time"
)

// Harness drives one shard State synchronously with a manual clock, for scenario tests: each Do
// runs an operation in its own batch, "commits" the batch to an in-memory log and releases the
// replies, exactly as the shard loop does after a durable Append. No goroutines, no sleeping.
type Harness struct {
	St    *State
	Clock *ManualClock
	// Log is every record committed so far, in write order.
	Log []Record
}

// NewHarness builds a harness on shard 0 with cfg (Shards defaults to 1), at a fixed start time.
func NewHarness(cfg *Config) *Harness {
	if cfg.Shards == 0 {
		cfg.Shards = 1
	}
	clock := NewManualClock(time.UnixMilli(1_700_000_000_000))
	st := NewState(0, cfg, slog.New(slog.DiscardHandler))
	st.Now = clock.Now()
	return &Harness{St: st, Clock: clock}
}

// Do runs op as one call and returns the call; a deferred reply (e.g. a JoinGroup waiting for the
// rebalance) is released by a later Do or Advance.
func (h *Harness) Do(meta Meta, op func(st *State, c *Call)) *Call {
	c := &Call{op: op, done: make(chan struct{}), Meta: meta}
	h.inBatch(func(st *State) { op(st, c) })
	return c
}

// Advance moves the clock by d and runs every timer now due, in one batch.
func (h *Harness) Advance(d time.Duration) {
	h.Clock.Advance(d)
	h.inBatch(func(st *State) {
		for {
			tm := st.Timers.popDue(st.Now)
			if tm == nil {
				return
			}
			tm.fn(st)
		}
	})
}

func (h *Harness) inBatch(fn func(st *State)) {
	b := &batch{}
	h.St.batch = b
	h.St.Now = h.Clock.Now()
	fn(h.St)
	h.St.batch = nil
	h.Log = append(h.Log, b.records...)
	for _, c := range b.replies {
		c.finish()
	}
}

// Done reports whether the call has been answered.
func (c *Call) Done() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Response is the call's reply (nil until Done).
func (c *Call) Response() any { return c.resp }

// Err is the call's error.
func (c *Call) Err() error { return c.err }

// Latest returns the live records: the last value per key, tombstones dropped, in random order
// (seeded), as a store's load could present them.
func (h *Harness) Latest(seed int64) []Record {
	last := map[string]Record{}
	for _, r := range h.Log {
		last[string(r.Key)] = r
	}
	var out []Record
	for _, r := range last {
		if r.Value != nil {
			out = append(out, r)
		}
	}
	rnd := rand.New(rand.NewSource(seed))
	rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Reload builds a fresh State by replaying Latest(seed), as a restart would.
func (h *Harness) Reload(seed int64) (*State, error) {
	st := NewState(h.St.Shard, h.St.Cfg, slog.New(slog.DiscardHandler))
	st.Now = h.Clock.Now()
	st.Loading = true
	for _, r := range h.Latest(seed) {
		if err := st.replay(r); err != nil {
			return nil, err
		}
	}
	st.Loading = false
	return st, nil
}

// Restart replaces the harness state by Reload(seed) and runs the on-load hooks (session timers
// re-armed and the like), as a shard load after a crash would; the log is kept.
func (h *Harness) Restart(seed int64) error {
	st, err := h.Reload(seed)
	if err != nil {
		return err
	}
	h.St = st
	h.inBatch(func(st *State) {
		for _, fn := range onLoadHooks {
			fn(st)
		}
	})
	return nil
}

// DurableView is a deterministic description of a State's durable content: every group's
// Durable() value and every committed offset. A group with no durable content of its own and no
// offsets (a classic group before its first record, a simple group whose offsets are gone) is
// left out: a restart does not rebuild it, and it holds nothing a restart could lose.
func DurableView(st *State) map[string]any {
	out := map[string]any{}
	for id, g := range st.Groups {
		if d, ok := g.(interface{ HasDurableContent() bool }); ok && !d.HasDurableContent() && !st.Offsets.HasOffsets(id) {
			continue
		}
		out["group/"+id] = struct {
			Type GroupType
			D    any
		}{g.Type(), g.Durable()}
	}
	for g, topics := range st.Offsets.groups() {
		for t, ps := range topics {
			for p, v := range ps {
				out["offset/"+g+"/"+t+"/"+itoa(p)] = *v
			}
		}
	}
	return out
}

func itoa(p int32) string {
	return strconv.Itoa(int(p))
}

// ReplayRecords builds a fresh State for shard from recs, as a shard load does (records in any
// order; the last value per key wins). It is the replay cost without the store read, for
// benchmarks and tools/growth.
func ReplayRecords(shard int32, cfg *Config, recs []Record) (*State, error) {
	st := NewState(shard, cfg, slog.New(slog.DiscardHandler))
	st.Loading = true
	for _, r := range recs {
		if err := st.replay(r); err != nil {
			return nil, err
		}
	}
	st.Loading = false
	return st, nil
}
