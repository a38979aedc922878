package txnapi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// The marker writer (Kafka's TransactionMarkerChannelManager): a prepared transaction's marker
// goes to each of its partitions — a data partition through the data plane, a
// __consumer_offsets partition to its group coordinator shard — and once every marker is
// durable the shard records the completion (CompleteCommit / CompleteAbort). EndTxn writes its
// markers itself before it answers (stronger than Kafka, which answers after PrepareCommit;
// the client's next transaction then finds the previous one complete). Transactions prepared
// elsewhere (a fencing InitProducerId, a timeout, a shard load that found them) are picked up
// by the background loop, woken by the shard's MarkersDue signal once their Prepare record is
// durable. A transaction's markers are written by one goroutine at a time; markers are
// idempotent per (partition, producer, epoch), so a retry after a crash is safe.

// markerRetry is the back-off before retrying markers that failed (a storage error).
const markerRetry = time.Second

// coordinatorEpoch is the coordinator epoch of muster's markers: a single node has one
// transaction coordinator per shard and never a stale one.
const coordinatorEpoch = 0

// markersDue is one shard's MarkersDue signal.
type markersDue struct {
	s     *Service
	shard int32
}

func (m markersDue) Release()   { m.s.flag(m.shard) }
func (m markersDue) Fail(error) {} // the batch failed: the shard reloads and signals again

// MarkersDue is shard's signal for its state (txn.NewShardState).
func (s *Service) MarkersDue(shard int32) coordinator.Pending { return markersDue{s: s, shard: shard} }

func (s *Service) flag(shard int32) {
	s.mu.Lock()
	s.flagged[shard] = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the background marker writer until Close.
func (s *Service) Start() {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	go s.loop()
}

// Close stops the marker writer (in-flight markers finish).
func (s *Service) Close() {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	select {
	case <-s.stop:
		return
	default:
		close(s.stop)
	}
	if started {
		<-s.done
	}
}

func (s *Service) loop() {
	defer close(s.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.stop
		cancel()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		shards := make([]int32, 0, len(s.flagged))
		for sh := range s.flagged {
			shards = append(shards, sh)
		}
		clear(s.flagged)
		s.mu.Unlock()
		for _, sh := range shards {
			prepared, err := doShard(ctx, s, sh, coordinator.Meta{}, txn.PreparedTxns(""))
			if err != nil {
				if ctx.Err() == nil {
					s.retryLater(sh)
				}
				continue
			}
			for _, p := range prepared {
				wg.Add(1)
				go func(sh int32, p txn.Prepared) {
					defer wg.Done()
					if err := s.complete(ctx, sh, p); err != nil && ctx.Err() == nil {
						s.Log.Warn("transaction markers failed; retrying", "transactional_id", p.ID, "err", err)
						s.retryLater(sh)
					}
				}(sh, p)
			}
		}
	}
}

func (s *Service) retryLater(shard int32) {
	time.AfterFunc(markerRetry, func() {
		select {
		case <-s.stop:
		default:
			s.flag(shard)
		}
	})
}

// completeID writes the markers of id's transaction if it is prepared (EndTxn's path).
func (s *Service) completeID(ctx context.Context, id string) error {
	sh := s.shardFor(id)
	prepared, err := doShard(ctx, s, sh, coordinator.Meta{}, txn.PreparedTxns(id))
	if err != nil {
		return err
	}
	for _, p := range prepared {
		if err := s.complete(ctx, sh, p); err != nil {
			return err
		}
	}
	return nil
}

// complete writes p's markers and records its completion; a concurrent completion of the same
// transaction is waited for instead of repeated.
func (s *Service) complete(ctx context.Context, shard int32, p txn.Prepared) error {
	s.mu.Lock()
	if c := s.inflight[p.ID]; c != nil && c.p.ProducerID == p.ProducerID && c.p.Epoch == p.Epoch && c.p.Commit == p.Commit {
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := &completion{p: p, done: make(chan struct{})}
	s.inflight[p.ID] = c
	s.mu.Unlock()
	start := time.Now()
	c.err = s.writeMarkers(ctx, p)
	if c.err == nil {
		c.err = s.completeApplied(ctx, shard, p)
	}
	if h := s.Hooks.OnMarkers; h != nil {
		h(p.Commit, len(p.Partitions), time.Since(start), c.err)
	}
	s.mu.Lock()
	if s.inflight[p.ID] == c {
		delete(s.inflight, p.ID)
	}
	s.mu.Unlock()
	close(c.done)
	return c.err
}

// completeApplied records p's completion and returns once the shard applied it, without
// waiting for its record to be durable: every later operation on the shard (the client's next
// transaction) sees the transaction complete and is made durable after it, and should the
// record be lost (a crash, a failed batch) the reloaded shard finds the transaction prepared
// again and the markers, idempotent, are written once more. This saves the client one fsync per
// transaction.
func (s *Service) completeApplied(ctx context.Context, shard int32, p txn.Prepared) error {
	applied := make(chan struct{}, 1)
	failed := make(chan error, 1)
	go func() {
		_, err := doShard(context.Background(), s, shard, coordinator.Meta{}, func(st *txn.ShardState, c *coordinator.Call[bool]) {
			txn.CompleteTxn(p)(st, c)
			applied <- struct{}{}
		})
		if err != nil {
			failed <- err
		}
	}()
	select {
	case <-applied:
		return nil
	case err := <-failed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeMarkers writes p's marker into every partition, concurrently. A partition whose topic
// is gone is skipped (Kafka: the leader is unknown, the partition was deleted); so is one whose
// producer state is already past this epoch (a newer marker, e.g. an operator's abort): the
// marker would be refused forever. Anything else fails the round, to be retried.
func (s *Service) writeMarkers(ctx context.Context, p txn.Prepared) error {
	errs := make([]error, len(p.Partitions))
	var wg sync.WaitGroup
	for i, tp := range p.Partitions {
		wg.Add(1)
		go func(i int, tp txn.TopicPartition) {
			defer wg.Done()
			errs[i] = s.writeMarker(ctx, tp, p.ProducerID, p.Epoch, p.Commit, coordinatorEpoch)
		}(i, tp)
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			s.Log.Info("transaction marker skipped: the partition no longer exists", "transactional_id", p.ID,
				"topic", p.Partitions[i].Topic, "partition", p.Partitions[i].Partition)
		case errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.TransactionCoordinatorFenced):
			s.Log.Warn("transaction marker skipped: the partition has a newer marker of the producer", "transactional_id", p.ID,
				"topic", p.Partitions[i].Topic, "partition", p.Partitions[i].Partition, "err", err)
		default:
			return err
		}
	}
	return nil
}

// writeMarker writes one marker: a __consumer_offsets partition is a group coordinator shard.
func (s *Service) writeMarker(ctx context.Context, tp txn.TopicPartition, pid int64, epoch int16, commit bool, coordEpoch int32) error {
	if tp.Topic == txn.OffsetsTopic {
		if tp.Partition < 0 || tp.Partition >= s.Groups.Shards() {
			return kerr.UnknownTopicOrPartition
		}
		return s.Groups.CompleteTransaction(ctx, tp.Partition, pid, epoch, commit)
	}
	if err := s.Data.AppendTxnMarker(tp.Topic, tp.Partition, pid, epoch, coordEpoch, commit); err != nil {
		return err
	}
	return nil
}
