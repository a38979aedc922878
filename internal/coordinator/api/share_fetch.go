package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// ShareFetch serves ShareFetch v1–v2 (KIP-932, KIP-1206, KIP-1222; Kafka's
// KafkaApis.handleShareFetchRequest with SharePartitionManager): the share session is checked
// and updated (epoch 0 opens one, -1 closes it), piggybacked acknowledgements are applied and
// made durable, then records of the session's partitions are acquired for the member on the
// group's shard and read from the logs. A fetch that acquires nothing waits up to MaxWaitMillis
// for new records or for records to become available again; one that acquired fewer than
// MinBytes keeps what it has and waits for more. Kafka does not check that the member belongs
// to the group here, only that its id is well formed.
func (s *Service) ShareFetch(ctx context.Context, meta coordinator.Meta, req *kmsg.ShareFetchRequest) *kmsg.ShareFetchResponse {
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	resp.AcquisitionLockTimeoutMillis = int32(s.Cfg.Share.RecordLockDuration / time.Millisecond)
	fail := func(err error) *kmsg.ShareFetchResponse {
		resp.ErrorCode, resp.ErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
		return resp
	}
	group, member := strOf(req.GroupID), strOf(req.MemberID)
	switch {
	case !s.Cfg.Share.Enabled:
		return fail(kerr.UnsupportedVersion)
	case group == "":
		return fail(coordinator.Errf(kerr.InvalidRequest, "GroupId can't be empty."))
	case member == "" || len(member) > maxShareMemberIDLength:
		return fail(coordinator.Errf(kerr.InvalidRequest, "Invalid member id %q.", member))
	}
	renew := req.Version >= 2 && req.IsRenewAck

	// The partitions the request names, and its acknowledgements.
	var named []coordinator.SharePartitionID
	var acks []ackIn
	withoutAcks := false
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			id := coordinator.SharePartitionID{TopicID: t.TopicID, Partition: p.Partition}
			named = append(named, id)
			if len(p.AcknowledgementBatches) == 0 {
				withoutAcks = true
				continue
			}
			a := ackIn{id: id}
			for _, b := range p.AcknowledgementBatches {
				a.batches = append(a.batches, coordinator.ShareAckBatch{First: b.FirstOffset, Last: b.LastOffset, Types: b.AcknowledgeTypes})
			}
			acks = append(acks, a)
		}
	}
	if renew && (req.MaxBytes != 0 || req.MinBytes != 0 || req.MaxRecords != 0 || req.MaxWaitMillis != 0 || withoutAcks) {
		return fail(coordinator.Errf(kerr.InvalidRequest, "A renew acknowledgement request must not fetch: its fetch parameters must be 0 and every partition must carry acknowledgements."))
	}
	var forgotten []coordinator.SharePartitionID
	for _, f := range req.ForgottenTopicsData {
		for _, p := range f.Partitions {
			forgotten = append(forgotten, coordinator.SharePartitionID{TopicID: f.TopicID, Partition: p})
		}
	}
	okAcks, failedAcks := s.splitAcks(acks, renew)
	key := shareSessionKey{group: group, member: member}
	out := newShareFetchResponse(resp)

	var (
		parts  []coordinator.SharePartitionID
		update map[coordinator.SharePartitionID]bool
		opened *shareSession
	)
	switch req.ShareSessionEpoch {
	case 0:
		if len(acks) > 0 {
			return fail(coordinator.Errf(kerr.InvalidRequest, "Acknowledge data is not allowed when opening a share session."))
		}
		old, err := s.openShareSession(ctx, key, named)
		if old != nil {
			s.releaseShareSession(old, false)
		}
		if err != nil {
			return fail(err)
		}
		opened = s.currentShareSession(key)
		parts, update, _ = opened.snapshot()
	case -1:
		if withoutAcks {
			return fail(coordinator.Errf(kerr.InvalidRequest, "A request closing a share session must not fetch."))
		}
		sess := s.closeShareSession(key)
		if sess == nil {
			return fail(kerr.ShareSessionNotFound)
		}
		res, err := do(ctx, s, group, meta, coordinator.Share(&coordinator.ShareRequest{Group: group, Member: member,
			Acks: okAcks, Release: sess.parts, UndoDelivery: true}))
		if err != nil {
			return fail(err)
		}
		out.acks(res.Acks, failedAcks)
		resp.AcquisitionLockTimeoutMillis = int32(res.LockDuration / time.Millisecond)
		return resp
	default:
		var err error
		parts, update, err = s.useShareSession(key, req.ShareSessionEpoch, named, forgotten)
		if err != nil {
			return fail(err)
		}
	}

	if renew {
		res, err := do(ctx, s, group, meta, coordinator.Share(&coordinator.ShareRequest{Group: group, Member: member, Acks: okAcks}))
		if err != nil {
			return fail(err)
		}
		out.acks(res.Acks, failedAcks)
		resp.AcquisitionLockTimeoutMillis = int32(res.LockDuration / time.Millisecond)
		return resp
	}

	f := &shareFetch{s: s, ctx: ctx, meta: meta, group: group, member: member, out: out}
	f.maxRecords = defaultShareMaxRecords
	if req.MaxRecords > 0 {
		f.maxRecords = int(req.MaxRecords)
	}
	f.maxBytes = int(req.MaxBytes)
	if f.maxBytes <= 0 {
		f.maxBytes = 1<<31 - 1
	}
	// Partitions in rotating order, so one partition cannot starve the others (Kafka rotates
	// its fetch order per request too).
	if n := len(parts); n > 1 {
		k := int(req.ShareSessionEpoch) % n
		parts = append(append([]coordinator.SharePartitionID(nil), parts[k:]...), parts[:k]...)
	}
	for _, p := range parts {
		f.targets = append(f.targets, p)
	}
	res, err := f.run(okAcks, time.Duration(req.MaxWaitMillis)*time.Millisecond, int(req.MinBytes))
	if err != nil {
		if opened != nil {
			s.dropShareSession(opened)
		}
		return fail(err)
	}
	resp.AcquisitionLockTimeoutMillis = int32(res.LockDuration / time.Millisecond)
	out.acks(res.Acks, failedAcks)
	if err := f.read(); err != nil {
		s.Log.Error("share fetch read", "group", group, "err", err)
	}
	batch := int32(0)
	if req.ShareAcquireMode == 0 {
		batch = req.BatchSize
	}
	for _, a := range f.acquired {
		p := out.partition(a.id)
		p.Records = a.records
		for _, r := range splitRanges(a.ranges, batch) {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = r.First, r.Last, r.DeliveryCount
			p.AcquiredRecords = append(p.AcquiredRecords, ar)
		}
	}
	for p, code := range f.errs {
		out.partition(p).ErrorCode = code
	}
	for _, p := range parts {
		if update[p] {
			out.partition(p)
		}
	}
	answered := map[coordinator.SharePartitionID]bool{}
	out.each(func(id coordinator.SharePartitionID, p *kmsg.ShareFetchResponseTopicPartition) {
		answered[id] = p.ErrorCode != 0
	})
	s.sessionUpdated(key, answered)
	return resp
}

// shareFetch is one ShareFetch's acquisition and read.
type shareFetch struct {
	s             *Service
	ctx           context.Context
	meta          coordinator.Meta
	group, member string
	maxRecords    int
	maxBytes      int
	targets       []coordinator.SharePartitionID
	errs          map[coordinator.SharePartitionID]int16
	acquired      []*shareAcquiredPart
	count         int
	out           *shareFetchResponse
}

type shareAcquiredPart struct {
	id      coordinator.SharePartitionID
	ranges  []coordinator.ShareRange
	records []byte
}

// fetchPartitions reads the targets' log offsets; partitions that do not exist are answered
// with their error.
func (f *shareFetch) fetchPartitions() []coordinator.ShareFetchPartition {
	var out []coordinator.ShareFetchPartition
	for _, p := range f.targets {
		if f.s.ShareLog == nil {
			f.fail(p, kerr.UnknownTopicID.Code)
			continue
		}
		ls, hw, err := f.s.ShareLog.PartitionOffsets(p.TopicID, p.Partition)
		if err != nil {
			f.fail(p, coordinator.ErrorCode(err))
			continue
		}
		out = append(out, coordinator.ShareFetchPartition{SharePartitionID: p, LogStart: ls, HighWatermark: hw, StartOffset: -1})
	}
	return out
}

func (f *shareFetch) fail(p coordinator.SharePartitionID, code int16) {
	if f.errs == nil {
		f.errs = map[coordinator.SharePartitionID]int16{}
	}
	f.errs[p] = code
}

// acquire runs one acquisition on the group's shard (with the acknowledgements the first time),
// resolving by_duration starts when the shard asks for them.
func (f *shareFetch) acquire(acks []coordinator.ShareAckPartition) (*coordinator.ShareResult, error) {
	fps := f.fetchPartitions()
	req := &coordinator.ShareRequest{Group: f.group, Member: f.member, Acks: acks, Fetch: fps, MaxRecords: f.maxRecords - f.count}
	res, err := do(f.ctx, f.s, f.group, f.meta, coordinator.Share(req))
	if err != nil {
		return nil, err
	}
	f.add(res.Acquired)
	if len(res.NeedStart) > 0 {
		var again []coordinator.ShareFetchPartition
		for _, n := range res.NeedStart {
			off, err := f.s.ShareLog.OffsetForTimestamp(n.TopicID, n.Partition, n.Timestamp)
			if err != nil {
				f.fail(n.SharePartitionID, coordinator.ErrorCode(err))
				continue
			}
			for _, fp := range fps {
				if fp.SharePartitionID == n.SharePartitionID {
					fp.StartOffset = off
					again = append(again, fp)
				}
			}
		}
		if len(again) > 0 {
			res2, err := do(f.ctx, f.s, f.group, f.meta, coordinator.Share(&coordinator.ShareRequest{Group: f.group, Member: f.member,
				Fetch: again, MaxRecords: f.maxRecords - f.count}))
			if err != nil {
				return nil, err
			}
			f.add(res2.Acquired)
			res.WakeSeq = res2.WakeSeq
		}
	}
	return res, nil
}

func (f *shareFetch) add(acq []coordinator.ShareAcquired) {
	for _, a := range acq {
		var part *shareAcquiredPart
		for _, x := range f.acquired {
			if x.id == a.SharePartitionID {
				part = x
			}
		}
		if part == nil {
			part = &shareAcquiredPart{id: a.SharePartitionID}
			f.acquired = append(f.acquired, part)
		}
		for _, r := range a.Ranges {
			part.ranges = append(part.ranges, r)
			f.count += int(r.Last - r.First + 1)
		}
	}
}

// run acquires, waiting up to maxWait while nothing (or less than minBytes) was acquired: for a
// produce to one of the partitions or for records of the group to become available again
// (ShareWatch), whichever comes first.
func (f *shareFetch) run(acks []coordinator.ShareAckPartition, maxWait time.Duration, minBytes int) (*coordinator.ShareResult, error) {
	deadline := time.Now().Add(maxWait)
	first, err := f.acquire(acks)
	if err != nil {
		return nil, err
	}
	if f.done(maxWait, minBytes) {
		return first, nil
	}
	wake := make(chan struct{}, 1)
	if f.s.ShareLog != nil {
		for _, p := range f.targets {
			cancel := f.s.ShareLog.WatchPartition(p.TopicID, p.Partition, wake)
			defer cancel()
		}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	seq := first.WakeSeq
	var watched chan struct{}
	watchCtx, stopWatch := context.WithCancel(f.ctx)
	defer stopWatch()
	for {
		if watched == nil {
			watched = make(chan struct{})
			go func(ch chan struct{}, since uint64, wait time.Duration) {
				defer close(ch)
				_, _ = do(watchCtx, f.s, f.group, f.meta, coordinator.ShareWatch(f.group, since, wait))
			}(watched, seq, time.Until(deadline))
		}
		select {
		case <-wake:
		case <-watched:
			watched = nil
		case <-timer.C:
			return first, nil
		case <-f.ctx.Done():
			return first, nil
		}
		res, err := f.acquire(nil)
		if err != nil {
			return first, nil // what was acquired is answered; the error shows on the next fetch
		}
		seq = res.WakeSeq
		if f.done(time.Until(deadline), minBytes) {
			return first, nil
		}
	}
}

// done reports whether the fetch can answer: it acquired something (and at least minBytes, when
// more than one byte is asked for), reached MaxRecords, or has no time left to wait.
func (f *shareFetch) done(left time.Duration, minBytes int) bool {
	if left <= 0 || f.count >= f.maxRecords || len(f.errs) > 0 && f.count == 0 && len(f.targets) == len(f.errs) {
		return true
	}
	if f.count == 0 {
		return false
	}
	if minBytes <= 1 {
		return true
	}
	n := 0
	for _, a := range f.acquired {
		b, err := f.s.ShareLog.ReadRange(a.id.TopicID, a.id.Partition, a.ranges[0].First, maxLast(a.ranges), minBytes)
		if err != nil {
			return true
		}
		n += len(b)
		if n >= minBytes {
			return true
		}
	}
	return false
}

func maxLast(rs []coordinator.ShareRange) int64 {
	m := int64(-1)
	for _, r := range rs {
		m = max(m, r.Last)
	}
	return m
}

func minFirst(rs []coordinator.ShareRange) int64 {
	m := rs[0].First
	for _, r := range rs {
		m = min(m, r.First)
	}
	return m
}

// read reads the batches holding the acquired records, up to MaxBytes (the first batch always);
// acquired records the response cannot hold are given back undelivered.
func (f *shareFetch) read() error {
	total := 0
	var giveBack []coordinator.ShareAcquired
	var firstErr error
	for _, a := range f.acquired {
		budget := f.maxBytes - total
		if budget <= 0 && total > 0 {
			giveBack = append(giveBack, coordinator.ShareAcquired{SharePartitionID: a.id, Ranges: a.ranges})
			a.ranges = nil
			continue
		}
		b, err := f.s.ShareLog.ReadRange(a.id.TopicID, a.id.Partition, minFirst(a.ranges), maxLast(a.ranges), max(budget, 1))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			giveBack = append(giveBack, coordinator.ShareAcquired{SharePartitionID: a.id, Ranges: a.ranges})
			a.ranges = nil
			f.fail(a.id, kerr.KafkaStorageError.Code)
			continue
		}
		end := lastBatchOffset(b)
		if end < maxLast(a.ranges) {
			kept, rest := cutRanges(a.ranges, end)
			a.ranges = kept
			if len(rest) > 0 {
				giveBack = append(giveBack, coordinator.ShareAcquired{SharePartitionID: a.id, Ranges: rest})
			}
		}
		a.records = b
		total += len(b)
	}
	if len(giveBack) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := do(ctx, f.s, f.group, f.meta, coordinator.Share(&coordinator.ShareRequest{Group: f.group, Member: f.member, Unacquire: giveBack})); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	kept := f.acquired[:0]
	for _, a := range f.acquired {
		if len(a.ranges) > 0 {
			kept = append(kept, a)
		}
	}
	f.acquired = kept
	return firstErr
}

// shareFetchResponse assembles a ShareFetch response's partitions by topic.
type shareFetchResponse struct {
	resp  *kmsg.ShareFetchResponse
	index map[coordinator.SharePartitionID][2]int
}

func newShareFetchResponse(resp *kmsg.ShareFetchResponse) *shareFetchResponse {
	return &shareFetchResponse{resp: resp, index: map[coordinator.SharePartitionID][2]int{}}
}

// partition returns the response entry of a partition, adding it (with no leader hint) first.
func (o *shareFetchResponse) partition(id coordinator.SharePartitionID) *kmsg.ShareFetchResponseTopicPartition {
	if ix, ok := o.index[id]; ok {
		return &o.resp.Topics[ix[0]].Partitions[ix[1]]
	}
	ti := -1
	for i := range o.resp.Topics {
		if o.resp.Topics[i].TopicID == id.TopicID {
			ti = i
		}
	}
	if ti < 0 {
		t := kmsg.NewShareFetchResponseTopic()
		t.TopicID = id.TopicID
		o.resp.Topics = append(o.resp.Topics, t)
		ti = len(o.resp.Topics) - 1
	}
	p := kmsg.NewShareFetchResponseTopicPartition()
	p.Partition = id.Partition
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
	o.resp.Topics[ti].Partitions = append(o.resp.Topics[ti].Partitions, p)
	o.index[id] = [2]int{ti, len(o.resp.Topics[ti].Partitions) - 1}
	return &o.resp.Topics[ti].Partitions[len(o.resp.Topics[ti].Partitions)-1]
}

func (o *shareFetchResponse) each(fn func(coordinator.SharePartitionID, *kmsg.ShareFetchResponseTopicPartition)) {
	for id := range o.index {
		fn(id, o.partition(id))
	}
}

// acks records the acknowledgement outcomes: every partition that carried acknowledgements is in
// the response (clients take its presence as the answer to them).
func (o *shareFetchResponse) acks(res []coordinator.ShareAckResult, failed map[coordinator.SharePartitionID]error) {
	for _, r := range res {
		p := o.partition(r.SharePartitionID)
		p.AcknowledgeErrorCode, p.AcknowledgeErrorMessage = coordinator.ErrorCode(r.Err), coordinator.ErrorMessage(r.Err)
	}
	for id, err := range failed {
		p := o.partition(id)
		p.AcknowledgeErrorCode, p.AcknowledgeErrorMessage = coordinator.ErrorCode(err), coordinator.ErrorMessage(err)
	}
}
