package data

import (
	"context"
	"encoding/base64"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// Partition leadership. On one node (Config.Leaders nil) this node leads every partition under
// leader epoch 0 from the moment it exists. In cluster mode a partition is led by the node that
// holds its lease: the lease manager calls LeadPartition with the lease's epoch (the leader
// epoch clients see in Metadata and that the stored batches carry) and the channel that closes
// when the lease is lost, and UnleadPartition to hand the partition over. A partition this node
// does not lead answers NOT_LEADER_OR_FOLLOWER; its log state here is not loaded. The store
// refuses a stale leader's writes (ErrFenced): the partition unloads at once and the manager
// hears of it (Leaders.Fenced).

// Leaders is the cluster's view of partition leadership (Config.Leaders; nil on one node).
type Leaders interface {
	// Leader returns the node leading partition index of topic and its leader epoch; ok is
	// false while no live node leads it.
	Leader(topic [16]byte, index int32) (node, epoch int32, ok bool)
	// Fenced tells that a write of the partition under epoch was refused: another node leads
	// it now, and this node's lease is lost.
	Fenced(topic [16]byte, index int32, epoch int32)
}

// leadership is one lease of a partition this node leads: the goroutine serving it loads the
// partition, and unloads it when the lease is lost, the partition is handed over (stop) or a
// write's outcome is unknown (reload: the partition loads again from the store).
type leadership struct {
	epoch  int32
	lost   <-chan struct{}
	reload chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// cluster reports whether partitions are leased (cluster mode).
func (p *Plane) cluster() bool { return p.cfg.Leaders != nil }

// newPart is a new partition of topic id: led from the start on one node, waiting for its lease
// in cluster mode.
func (p *Plane) newPart(id [16]byte, index int32) *partition {
	part := newPartition(id, index, p.cfg.Now().UnixMilli())
	part.led = !p.cluster()
	return part
}

// LeadPartition makes this node the leader of partition index of topic under epoch until lost
// is closed or UnleadPartition: the partition's end state is loaded from the store (requests
// meanwhile answer NOT_LEADER_OR_FOLLOWER; a failing store is retried with back-off) and it
// then takes writes. A previous leadership of the partition here ends first.
func (p *Plane) LeadPartition(topic [16]byte, index int32, epoch int32, lost <-chan struct{}) {
	t, parts := p.lookupID(topic)
	if t == nil || index < 0 || int(index) >= len(parts) {
		p.log.Warn("data: lease of an unknown partition ignored", "topic_id", topicIDString(topic), "partition", index)
		return
	}
	part := parts[index]
	l := &leadership{epoch: epoch, lost: lost, reload: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	part.mu.Lock()
	prev := part.lease
	part.lease = l
	part.mu.Unlock()
	if prev != nil {
		prev.end()
		<-prev.done
	}
	go p.serveLeadership(t, part, l)
}

// end stops the leadership (idempotent).
func (l *leadership) end() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
}

// UnleadPartition hands a partition over: it stops taking writes, waits (bounded by ctx) for
// the writes already taken to be durable, and unloads.
func (p *Plane) UnleadPartition(ctx context.Context, topic [16]byte, index int32) error {
	_, parts := p.lookupID(topic)
	if index < 0 || int(index) >= len(parts) {
		return nil
	}
	part := parts[index]
	part.mu.Lock()
	l := part.lease
	part.mu.Unlock()
	if l == nil {
		return nil
	}
	l.end()
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leading reports whether this node leads the partition with its state loaded.
func (p *Plane) Leading(topic [16]byte, index int32) bool {
	_, parts := p.lookupID(topic)
	if index < 0 || int(index) >= len(parts) {
		return false
	}
	part := parts[index]
	part.mu.Lock()
	defer part.mu.Unlock()
	return part.led
}

// leadRetry bounds the back-off between attempts to load a partition while the store fails.
const leadRetry = 2 * time.Second

func (p *Plane) serveLeadership(t *topic, part *partition, l *leadership) {
	defer close(l.done)
	for {
		for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, leadRetry) {
			err := p.lead(t, part, l.epoch)
			if err == nil {
				break
			}
			if errors.Is(err, ErrFenced) {
				p.cfg.Leaders.Fenced(t.id, part.index, l.epoch)
			} else {
				p.log.Warn("data: loading a led partition failed; retrying", "topic", t.name, "partition", part.index, "epoch", l.epoch, "err", err)
			}
			select {
			case <-l.lost:
				return
			case <-l.stop:
				return
			case <-p.closing:
				return
			case <-time.After(backoff):
			}
		}
		select {
		case <-l.reload:
			p.log.Warn("data: a write's outcome is unknown; loading the partition again", "topic", t.name, "partition", part.index, "epoch", l.epoch)
			p.unlead(part, l.epoch, false)
		case <-l.lost:
			p.unlead(part, l.epoch, false)
			return
		case <-l.stop:
			p.unlead(part, l.epoch, true)
			return
		case <-p.closing:
			p.unlead(part, l.epoch, false)
			return
		}
	}
}

// lead loads part from the store and starts leading it under epoch.
func (p *Plane) lead(t *topic, part *partition, epoch int32) error {
	part.logMu.Lock() // no retention, DeleteRecords or cleaner commit meanwhile
	defer part.logMu.Unlock()
	fresh := newPartition(part.topicID, part.index, p.cfg.Now().UnixMilli())
	fresh.epoch = epoch
	if err := p.loadPartition(t, fresh); err != nil {
		return err
	}
	p.st.Lead(PartitionID{t.id, part.index}, fresh.next)
	logStart, end, producers := fresh.logStart, fresh.next, len(fresh.producers)
	part.mu.Lock()
	part.adopt(fresh)
	part.led, part.epoch = true, epoch
	part.wakeLocked()
	part.mu.Unlock()
	p.log.Info("data: leading partition", "topic", t.name, "partition", part.index, "epoch", epoch,
		"log_start", logStart, "log_end", end, "producers", producers)
	return nil
}

// adopt takes over the loaded log state of fresh (p.mu held).
func (p *partition) adopt(fresh *partition) {
	p.next, p.hw, p.logStart = fresh.next, fresh.hw, fresh.logStart
	p.inflight = nil
	p.producers = fresh.producers
	p.lastExpiryCheck = fresh.lastExpiryCheck
	p.segs = fresh.segs
	p.firstDirty = fresh.firstDirty
	p.openTxns, p.firstUnstable, p.aborted = fresh.openTxns, fresh.firstUnstable, fresh.aborted
}

// unlead stops leading part under epoch (a no-op when another epoch leads it meanwhile). With
// drain, it waits for the appends already taken to finish.
func (p *Plane) unlead(part *partition, epoch int32, drain bool) {
	part.mu.Lock()
	if !part.led || part.epoch != epoch {
		part.mu.Unlock()
		return
	}
	part.led = false
	var wait []chan struct{}
	if drain {
		for _, pa := range part.inflight {
			wait = append(wait, pa.ch)
		}
	}
	part.wakeLocked() // long polls answer NOT_LEADER_OR_FOLLOWER
	part.mu.Unlock()
	for _, ch := range wait {
		<-ch
	}
	p.st.Unlead(PartitionID{part.topicID, part.index})
}

// writeFailed handles a failed write of part made under epoch in cluster mode: a fenced write
// unloads the partition (another node leads it), a write whose outcome is unknown loads it
// again. Refusals of the disk guard change nothing.
func (p *Plane) writeFailed(part *partition, epoch int32, err error) {
	if !p.cluster() || err == nil {
		return
	}
	part.mu.Lock()
	l := part.lease
	part.mu.Unlock()
	switch {
	case errors.Is(err, ErrFenced):
		p.unlead(part, epoch, false)
		p.cfg.Leaders.Fenced(part.topicID, part.index, epoch)
	case l != nil && l.epoch == epoch:
		select {
		case l.reload <- struct{}{}:
		default:
		}
	}
}

// writeError is a failed write's answer: NOT_LEADER_OR_FOLLOWER when another node leads the
// partition now or this node reloads it, else KAFKA_STORAGE_ERROR.
func (p *Plane) writeError(err error) *kerr.Error {
	if p.cluster() && !errors.Is(err, diskguard.ErrRefused) {
		return kerr.NotLeaderForPartition
	}
	return kerr.KafkaStorageError
}

// stalls reports whether a failed write stops the high watermark before it: the write may be
// visible in the store although it failed (Pebble's memtable after a failed commit until a
// restart; any unknown outcome in cluster mode, until the partition loads again).
func (p *Plane) stalls(err error) bool {
	if err == nil || errors.Is(err, diskguard.ErrRefused) {
		return false
	}
	var failed *diskguard.CommitError
	return p.cluster() || errors.As(err, &failed)
}

// leaderOf returns the node leading part and its leader epoch: this node under epoch 0 on one
// node; in cluster mode this node when it leads the partition, else the lease holder.
func (p *Plane) leaderOf(t *topic, part *partition) (node, epoch int32, ok bool) {
	if !p.cluster() {
		return p.cfg.NodeID, 0, true
	}
	part.mu.Lock()
	led, epoch := part.led, part.epoch
	part.mu.Unlock()
	if led {
		return p.cfg.NodeID, epoch, true
	}
	return p.cfg.Leaders.Leader(t.id, part.index)
}

// leaderCheck is a request's error for a partition this node leads (led) under epoch, when the
// request names currentEpoch (checked when versioned: the request's version has the field).
func leaderCheck(led bool, epoch, currentEpoch int32, versioned bool) *kerr.Error {
	if !led {
		return kerr.NotLeaderForPartition
	}
	if versioned {
		return checkEpoch(currentEpoch, epoch)
	}
	return nil
}

// leaderState returns the log start offset, high watermark, last stable offset and leader
// epoch, and whether this node leads the partition (the offsets mean nothing otherwise).
func (p *partition) leaderState() (logStart, hw, lso int64, epoch int32, led bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logStart, p.hw, p.lsoLocked(), p.epoch, p.led
}

// checkEpoch applies Kafka's leader epoch check of a request naming currentEpoch (-1: none)
// against the leader's epoch: FENCED_LEADER_EPOCH when the request's is older,
// UNKNOWN_LEADER_EPOCH when it is newer (this leader is stale, or the client knows of a
// leadership not started here yet).
func checkEpoch(currentEpoch, epoch int32) *kerr.Error {
	switch {
	case currentEpoch < 0 || currentEpoch == epoch:
		return nil
	case currentEpoch < epoch:
		return kerr.FencedLeaderEpoch
	}
	return kerr.UnknownLeaderEpoch
}

// topicIDString is a topic id as Kafka prints it (URL-safe base64 without padding).
func topicIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
