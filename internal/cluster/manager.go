// Package cluster runs a muster node in cluster mode: it registers the node in the shared
// store's registry with a lease it renews, and hands coordinator shards to the node's runtimes
// as it acquires their leases: a fair share per live node, rebalanced when nodes join, drain or
// die (a dead node's leases are taken once its registration expires on the database's clock).
// It is also the node's directory: who serves which shard, and where each node listens.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
)

// Host serves the shards of one lease kind on this node: a coordinator runtime in managed mode
// (engine.Runtime implements it).
type Host interface {
	// Serve loads the lease's shard and serves it until the lease is lost or fenced, or Unserve.
	Serve(l store.Shard)
	// Unserve stops serving shard after its last Append; it returns once the lease is unused.
	Unserve(ctx context.Context, shard int32) error
	// Active reports whether shard is loaded and serving.
	Active(shard int32) bool
}

// Kind is one kind of leased shard: a coordinator's store and the runtime serving its shards.
type Kind struct {
	Store *postgres.Coordinator
	Host  Host
}

// Hooks observe the manager (metrics). Each may be nil.
type Hooks struct {
	// Acquired: a lease was acquired; takeover is the time from the previous holder's expiry
	// to the acquisition (database clock), 0 when the lease was free or released.
	Acquired func(kind string, takeover time.Duration)
	// Lost: a lease was lost ("renewal", "taken", "fenced") or handed over ("released").
	Lost func(kind, reason string)
}

// Config configures a Manager.
type Config struct {
	Node postgres.Node
	// PrevIncarnation is this node's previous run (read from its data dir, 0 if none): its
	// registration and leases are taken over at once.
	PrevIncarnation int64
	TTL             time.Duration
	Log             *slog.Logger
	Hooks           Hooks
}

type leaseKey struct {
	kind  string
	shard int32
}

// Manager keeps this node registered and its fair share of leases served.
type Manager struct {
	db    *postgres.DB
	cfg   Config
	me    postgres.Me
	kinds map[string]Kind
	order []string
	log   *slog.Logger

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	view     *postgres.View
	held     map[leaseKey]*postgres.Shard
	valid    time.Time // local monotonic deadline of the node's registration
	balanced bool      // at least one balancing round finished
	draining bool
	watchdog *time.Timer
}

// Tick is how often the manager renews and rebalances at ttl: a tenth of it, at least 100 ms.
func Tick(ttl time.Duration) time.Duration {
	t := ttl / 10
	if t < 100*time.Millisecond {
		t = 100 * time.Millisecond
	}
	return t
}

// Start registers the node (waiting while a live run of the same node id holds the
// registration) and starts renewing and balancing. ctx bounds the registration only.
func Start(ctx context.Context, db *postgres.DB, cfg Config, kinds ...Kind) (*Manager, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := &Manager{db: db, cfg: cfg, me: postgres.Me{ID: cfg.Node.ID, Incarnation: cfg.Node.Incarnation},
		kinds: map[string]Kind{}, log: cfg.Log, wake: make(chan struct{}, 1), done: make(chan struct{}),
		held: map[leaseKey]*postgres.Shard{}}
	for _, k := range kinds {
		name := k.Store.Kind()
		m.kinds[name] = k
		m.order = append(m.order, name)
		k.Store.OnFenced(func(shard int32, epoch int64) { m.fenced(name, shard, epoch) })
	}
	for warned := false; ; {
		start := time.Now()
		err := db.Register(ctx, cfg.Node, cfg.PrevIncarnation, cfg.TTL)
		if err == nil {
			m.renewed(start)
			break
		}
		if !errors.Is(err, postgres.ErrNodeIDInUse) {
			return nil, err
		}
		if !warned {
			m.log.Warn("cluster: node.id is registered by a live node; waiting for its registration to expire", "node", cfg.Node.ID, "ttl", cfg.TTL)
			warned = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %v", err, ctx.Err())
		case <-time.After(Tick(cfg.TTL)):
		}
	}
	lctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go db.Listen(lctx, postgres.NotifyChannel, func(string) { m.poke() })
	go m.loop(lctx)
	m.log.Info("cluster: node registered", "node", cfg.Node.ID, "incarnation", cfg.Node.Incarnation, "ttl", cfg.TTL)
	return m, nil
}

// Me identifies this node's run.
func (m *Manager) Me() postgres.Me { return m.me }

func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// renewed records a successful renewal sent at start: the registration holds until start+TTL
// on this node's clock (the database's expiry is later, since the database stamped it after
// start). The watchdog unloads every shard shortly before that unless a renewal comes first.
func (m *Manager) renewed(start time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.valid = start.Add(m.cfg.TTL)
	d := time.Until(m.valid) - m.margin()
	if m.watchdog == nil {
		m.watchdog = time.AfterFunc(d, m.expired)
	} else {
		m.watchdog.Reset(d)
	}
}

// margin is how long before the registration's local deadline the watchdog unloads.
func (m *Manager) margin() time.Duration {
	if d := m.cfg.TTL / 10; d < 250*time.Millisecond {
		return d
	}
	return 250 * time.Millisecond
}

// expired runs when the registration may have expired without a renewal: every lease is
// treated as lost (another node may take it any moment).
func (m *Manager) expired() {
	m.mu.Lock()
	if time.Until(m.valid) > 2*m.margin() { // renewed meanwhile (the timer fires margin before)
		m.mu.Unlock()
		return
	}
	n := len(m.held)
	m.mu.Unlock()
	if n > 0 {
		m.log.Warn("cluster: registration not renewed in time; unloading every shard", "node", m.me.ID, "leases", n)
	}
	m.loseAll("renewal")
}

func (m *Manager) loseAll(reason string) {
	m.mu.Lock()
	held := m.held
	m.held = map[leaseKey]*postgres.Shard{}
	m.mu.Unlock()
	for k, l := range held {
		l.MarkLost()
		if h := m.cfg.Hooks.Lost; h != nil {
			h(k.kind, reason)
		}
	}
}

// fenced is told by the store that an Append or Load of a held lease was refused.
func (m *Manager) fenced(kind string, shard int32, epoch int64) {
	m.mu.Lock()
	k := leaseKey{kind, shard}
	l, ok := m.held[k]
	if ok && l.Epoch() == epoch {
		delete(m.held, k)
	}
	m.mu.Unlock()
	if ok {
		m.log.Warn("cluster: lease fenced by a newer epoch; shard unloaded", "kind", kind, "shard", shard, "epoch", epoch)
		if h := m.cfg.Hooks.Lost; h != nil {
			h(kind, "fenced")
		}
	}
	m.poke()
}

func (m *Manager) loop(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(Tick(m.cfg.TTL))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.wake:
		}
		m.round(ctx)
	}
}

// round renews the registration, drops leases the view shows gone, and moves towards the fair
// share: releases shards assigned elsewhere, acquires free shards assigned here.
func (m *Manager) round(ctx context.Context) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, m.cfg.TTL/3)
	v, err := m.db.Renew(rctx, m.me, m.cfg.TTL)
	cancel()
	if errors.Is(err, postgres.ErrNotRegistered) {
		m.log.Warn("cluster: registration gone; unloading every shard and registering again", "node", m.me.ID)
		m.loseAll("renewal")
		if err := m.db.Register(ctx, m.cfg.Node, m.me.Incarnation, m.cfg.TTL); err != nil {
			m.log.Error("cluster: registering again", "err", err)
			return
		}
		start = time.Now()
		if v, err = m.db.Renew(ctx, m.me, m.cfg.TTL); err != nil {
			return
		}
	} else if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("cluster: renewal failed", "node", m.me.ID, "err", err)
		}
		return
	}
	m.renewed(start)
	m.mu.Lock()
	m.view = v
	draining := m.draining
	var gone []*postgres.Shard
	for k, l := range m.held {
		cur, ok := findLease(v, k)
		if !ok || cur.Epoch != l.Epoch() || cur.Owner != m.me.ID || cur.OwnerInc != m.me.Incarnation {
			gone = append(gone, l)
			delete(m.held, k)
			if h := m.cfg.Hooks.Lost; h != nil {
				h(k.kind, "taken")
			}
		}
	}
	m.mu.Unlock()
	for _, l := range gone {
		m.log.Warn("cluster: lease taken by another node; unloading", "shard", l.ID(), "epoch", l.Epoch())
		l.MarkLost()
	}
	if draining {
		return
	}
	for _, name := range m.order {
		k := m.kinds[name]
		want := assign(v, name, k.Store.Config().Shards)
		for sh := int32(0); sh < k.Store.Config().Shards; sh++ {
			key := leaseKey{name, sh}
			m.mu.Lock()
			l, mine := m.held[key]
			m.mu.Unlock()
			owner, assigned := want[sh]
			switch {
			case mine && assigned && owner != m.me.ID:
				m.handOver(ctx, name, k, l, owner)
			case !mine && assigned && owner == m.me.ID:
				m.tryAcquire(ctx, v, name, k, sh)
			}
		}
	}
	m.mu.Lock()
	m.balanced = true
	m.mu.Unlock()
}

func findLease(v *postgres.View, k leaseKey) (postgres.Lease, bool) {
	for _, l := range v.Leases {
		if l.Kind == k.kind && l.Shard == k.shard {
			return l, true
		}
	}
	return postgres.Lease{}, false
}

// tryAcquire takes a shard assigned here when no live node holds it.
func (m *Manager) tryAcquire(ctx context.Context, v *postgres.View, name string, k Kind, sh int32) {
	cur, ok := findLease(v, leaseKey{name, sh})
	if ok && v.Held(cur) && !(cur.Owner == m.me.ID && cur.OwnerInc == m.me.Incarnation) {
		return // its holder hands it over when it sees the same assignment
	}
	actx, cancel := context.WithTimeout(ctx, m.cfg.TTL)
	lease, err := k.Store.Acquire(actx, sh)
	cancel()
	if err != nil {
		if !errors.Is(err, postgres.ErrLeaseHeld) && ctx.Err() == nil {
			m.log.Warn("cluster: acquiring a lease", "kind", name, "shard", sh, "err", err)
		}
		return
	}
	l := lease.(*postgres.Shard)
	var takeover time.Duration
	if ok && cur.Owner >= 0 && !(cur.Owner == m.me.ID && cur.OwnerInc == m.me.Incarnation) {
		if prev, found := v.Node(cur.Owner); found && prev.Incarnation == cur.OwnerInc && !prev.Live {
			takeover = v.Now.Sub(prev.ExpiresAt)
			if takeover < 0 {
				takeover = 0
			}
			m.log.Info("cluster: took over the lease of an expired node", "kind", name, "shard", sh,
				"from", cur.Owner, "epoch", l.Epoch(), "expired_ago", takeover)
		}
	}
	m.mu.Lock()
	m.held[leaseKey{name, sh}] = l
	m.mu.Unlock()
	if h := m.cfg.Hooks.Acquired; h != nil {
		h(name, takeover)
	}
	k.Host.Serve(l)
}

// handOver unloads a shard assigned to another node and releases its lease, once that node is
// live (it then acquires it at its next round, or at once through the notification).
func (m *Manager) handOver(ctx context.Context, name string, k Kind, l *postgres.Shard, to int32) {
	m.log.Info("cluster: handing a shard over", "kind", name, "shard", l.ID(), "to", to)
	m.release(ctx, name, k, l)
}

func (m *Manager) release(ctx context.Context, name string, k Kind, l *postgres.Shard) {
	uctx, cancel := context.WithTimeout(ctx, m.cfg.TTL)
	defer cancel()
	if err := k.Host.Unserve(uctx, l.ID()); err != nil {
		m.log.Warn("cluster: unloading a shard to hand it over", "kind", name, "shard", l.ID(), "err", err)
	}
	m.mu.Lock()
	delete(m.held, leaseKey{name, l.ID()})
	m.mu.Unlock()
	if err := l.Release(uctx); err != nil {
		m.log.Warn("cluster: releasing a lease (it expires with the registration)", "kind", name, "shard", l.ID(), "err", err)
	}
	if h := m.cfg.Hooks.Lost; h != nil {
		h(name, "released")
	}
}

// Drain hands every shard over and ends the registration (graceful stop): the node is marked
// draining so no node assigns it shards, each shard commits its last batch and its lease is
// released, and the others acquire them at once.
func (m *Manager) Drain(ctx context.Context) {
	m.mu.Lock()
	m.draining = true
	m.mu.Unlock()
	if err := m.db.Drain(ctx, m.me); err != nil {
		m.log.Warn("cluster: marking the node draining", "err", err)
	}
	m.cancel()
	<-m.done
	m.mu.Lock()
	held := make(map[leaseKey]*postgres.Shard, len(m.held))
	for k, l := range m.held {
		held[k] = l
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for k, l := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.release(ctx, k.kind, m.kinds[k.kind], l)
		}()
	}
	wg.Wait()
	if err := m.db.Deregister(ctx, m.me); err != nil {
		m.log.Warn("cluster: ending the registration", "err", err)
	}
	m.mu.Lock()
	if m.watchdog != nil {
		m.watchdog.Stop()
	}
	m.mu.Unlock()
	m.log.Info("cluster: node drained", "node", m.me.ID, "released", len(held))
}

// Close stops renewing without handing anything over (the leases expire after the TTL).
// After Drain it only waits.
func (m *Manager) Close() {
	m.cancel()
	<-m.done
	m.mu.Lock()
	if m.watchdog != nil {
		m.watchdog.Stop()
	}
	m.mu.Unlock()
}

// Ready reports whether the node's registration is live, it has balanced at least once and
// every shard whose lease it holds is loaded.
func (m *Manager) Ready() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.balanced || m.draining || time.Now().After(m.valid) {
		return false
	}
	for k := range m.held {
		if !m.kinds[k.kind].Host.Active(k.shard) {
			return false
		}
	}
	return true
}

// Owner returns the node that serves shard of kind: this node when it holds the lease, else
// the live holder in the newest view. ok is false when no live node holds it.
func (m *Manager) Owner(kind string, shard int32) (postgres.Node, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.held[leaseKey{kind, shard}]; ok {
		return m.selfLocked(), true
	}
	if m.view == nil {
		return postgres.Node{}, false
	}
	l, ok := findLease(m.view, leaseKey{kind, shard})
	if !ok || !m.view.Held(l) || l.Owner == m.me.ID {
		return postgres.Node{}, false
	}
	return m.view.Node(l.Owner)
}

func (m *Manager) selfLocked() postgres.Node {
	n := m.cfg.Node
	n.Live = true
	return n
}

// Nodes returns the live nodes of the newest view (this node always among them).
func (m *Manager) Nodes() []postgres.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []postgres.Node{m.selfLocked()}
	if m.view == nil {
		return out
	}
	for _, n := range m.view.Nodes {
		if n.Live && n.ID != m.me.ID {
			out = append(out, n)
		}
	}
	return out
}

// Node returns the registry row of id from the newest view (live or not).
func (m *Manager) Node(id int32) (postgres.Node, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == m.me.ID {
		return m.selfLocked(), true
	}
	if m.view == nil {
		return postgres.Node{}, false
	}
	return m.view.Node(id)
}

// HeldCount is the number of leases of kind this node holds.
func (m *Manager) HeldCount(kind string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k := range m.held {
		if k.kind == kind {
			n++
		}
	}
	return n
}
