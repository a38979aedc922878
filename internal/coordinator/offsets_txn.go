package coordinator

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactional offsets (KIP-98, KIP-447; Kafka's OffsetMetadataManager
// pendingTransactionalOffsets and openTransactionsByGroup). A TxnOffsetCommit stages offsets
// per producer; they become committed offsets when the transaction's COMMIT marker reaches the
// shard and vanish on ABORT. Kafka keeps them as transactional OffsetCommit records in the log
// and relies on log order ("the higher record offset wins"); muster's state is the set of
// live records, replayed in any order, so pending offsets have their own record type
// (RecPendingTxnOffset, docs/records.md) whose value says everything order would have said:
//
//   - Seq is a per-shard sequence that orders pending offsets of the same partition staged
//     by different producers;
//   - Superseded marks a pending offset that a later write of the committed offset (a plain
//     OffsetCommit, or another transaction's materialization with a higher Seq) has overtaken:
//     its COMMIT marker must not materialize it (Kafka: "Skipped the materialization of
//     transactional offset commit ... since its record offset ... is smaller").
//
// A marker is one shard batch: COMMIT writes an OffsetCommit record for each of the
// producer's pending offsets that is not superseded (and supersedes the older pending
// offsets of those partitions), and tombstones every pending record of the producer; ABORT
// only tombstones. Tombstones of committed offsets (OffsetDelete, DeleteGroups, topic
// deletion) tombstone the partition's pending offsets too; expiry skips partitions with
// pending offsets and never deletes a group that has them.

// RecPendingTxnOffset is muster's record of one pending transactional offset: key group,
// producer id, topic, partition; value the offset with the producer epoch, Seq and Superseded.
// Its id is private to muster, far from Kafka's record types (0–23 and growing).
const RecPendingTxnOffset int16 = 1000

// PendingOffset is one pending transactional offset.
type PendingOffset struct {
	OffsetValue
	ProducerEpoch int16
	Seq           int64
	Superseded    bool
}

// TxnOffsets holds a shard's pending transactional offsets.
type TxnOffsets struct {
	// byGroup: group → topic → partition → producer id → pending offset.
	byGroup map[string]map[string]map[int32]map[int64]*PendingOffset
	// byProducer: producer id → the (group, topic, partition) it has pending offsets for.
	byProducer map[int64]map[txnOffsetKey]struct{}
	// nextSeq is one past the highest Seq replayed or written (a reload derives it from the
	// live records; any new pending offset is later than all of them).
	nextSeq int64
	count   int
}

type txnOffsetKey struct {
	group, topic string
	partition    int32
}

func newTxnOffsets() *TxnOffsets {
	return &TxnOffsets{byGroup: map[string]map[string]map[int32]map[int64]*PendingOffset{},
		byProducer: map[int64]map[txnOffsetKey]struct{}{}}
}

// Count is the number of pending transactional offsets.
func (t *TxnOffsets) Count() int { return t.count }

// HasGroup reports whether group has pending transactional offsets (an open transaction).
func (t *TxnOffsets) HasGroup(group string) bool { return len(t.byGroup[group]) > 0 }

// HasPartition reports whether a transaction holds pending offsets for the partition
// (OffsetFetch's RequireStable answers UNSTABLE_OFFSET_COMMIT for it).
func (t *TxnOffsets) HasPartition(group, topic string, partition int32) bool {
	return len(t.byGroup[group][topic][partition]) > 0
}

// Get returns the pending offset of producer pid for the partition.
func (t *TxnOffsets) Get(group, topic string, partition int32, pid int64) (*PendingOffset, bool) {
	v, ok := t.byGroup[group][topic][partition][pid]
	return v, ok
}

// Producers lists the producer ids with pending offsets for the partition, sorted.
func (t *TxnOffsets) Producers(group, topic string, partition int32) []int64 {
	m := t.byGroup[group][topic][partition]
	out := make([]int64, 0, len(m))
	for pid := range m {
		out = append(out, pid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Partitions lists the (topic, partition) pairs with pending offsets of a group, sorted.
func (t *TxnOffsets) Partitions(group string) []TopicPartitionRef {
	var out []TopicPartitionRef
	for topic, parts := range t.byGroup[group] {
		for p := range parts {
			out = append(out, TopicPartitionRef{topic, p})
		}
	}
	sortRefs(out)
	return out
}

// ProducerIDs lists the producers with pending offsets on the shard, sorted.
func (t *TxnOffsets) ProducerIDs() []int64 {
	out := make([]int64, 0, len(t.byProducer))
	for pid := range t.byProducer {
		out = append(out, pid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TopicPartitionRef names a partition of a group's offsets.
type TopicPartitionRef struct {
	Topic     string
	Partition int32
}

func sortRefs(rs []TopicPartitionRef) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Topic != rs[j].Topic {
			return rs[i].Topic < rs[j].Topic
		}
		return rs[i].Partition < rs[j].Partition
	})
}

func (t *TxnOffsets) put(k txnOffsetKey, pid int64, v *PendingOffset) {
	g := t.byGroup[k.group]
	if g == nil {
		g = map[string]map[int32]map[int64]*PendingOffset{}
		t.byGroup[k.group] = g
	}
	tp := g[k.topic]
	if tp == nil {
		tp = map[int32]map[int64]*PendingOffset{}
		g[k.topic] = tp
	}
	ps := tp[k.partition]
	if ps == nil {
		ps = map[int64]*PendingOffset{}
		tp[k.partition] = ps
	}
	if _, ok := ps[pid]; !ok {
		t.count++
	}
	ps[pid] = v
	bp := t.byProducer[pid]
	if bp == nil {
		bp = map[txnOffsetKey]struct{}{}
		t.byProducer[pid] = bp
	}
	bp[k] = struct{}{}
	t.nextSeq = max(t.nextSeq, v.Seq+1)
}

func (t *TxnOffsets) remove(k txnOffsetKey, pid int64) {
	ps := t.byGroup[k.group][k.topic][k.partition]
	if _, ok := ps[pid]; !ok {
		return
	}
	t.count--
	delete(ps, pid)
	if len(ps) == 0 {
		delete(t.byGroup[k.group][k.topic], k.partition)
		if len(t.byGroup[k.group][k.topic]) == 0 {
			delete(t.byGroup[k.group], k.topic)
			if len(t.byGroup[k.group]) == 0 {
				delete(t.byGroup, k.group)
			}
		}
	}
	if bp := t.byProducer[pid]; bp != nil {
		delete(bp, k)
		if len(bp) == 0 {
			delete(t.byProducer, pid)
		}
	}
}

func pendingOffsetKey(k txnOffsetKey, pid int64) []byte {
	e := Enc{B: make([]byte, 0, 24+len(k.group)+len(k.topic))}
	e.Int16(RecPendingTxnOffset)
	e.String(k.group)
	e.Int64(pid)
	e.String(k.topic)
	e.Int32(k.partition)
	return e.B
}

func pendingOffsetValue(v *PendingOffset) []byte {
	e := Enc{B: make([]byte, 0, 48+len(v.Metadata))}
	e.Int16(0) // version
	e.Int64(v.Offset)
	e.Int32(v.LeaderEpoch)
	e.String(v.Metadata)
	e.Int64(v.CommitMs)
	e.Int16(v.ProducerEpoch)
	e.Int64(v.Seq)
	e.Bool(v.Superseded)
	return e.B
}

// replayPendingOffset applies a RecPendingTxnOffset record. Like a committed offset, a pending
// offset of an unknown group creates a "simple" classic group (Kafka's
// OffsetMetadataManager.replay of a transactional OffsetCommit record).
func replayPendingOffset(st *State, key, value []byte) error {
	d := Dec{B: key[2:]}
	k := txnOffsetKey{group: d.String()}
	pid := d.Int64()
	k.topic, k.partition = d.String(), d.Int32()
	if err := d.Done(); err != nil {
		return wrapCorrupt("PendingTxnOffsetKey", err)
	}
	if value == nil {
		st.TxnOffsets.remove(k, pid)
		return nil
	}
	vd := Dec{B: value}
	if version := vd.Int16(); version != 0 && vd.Err() == nil {
		return wrapCorrupt("PendingTxnOffsetValue", fmt.Errorf("unknown version %d", version))
	}
	v := &PendingOffset{}
	v.Offset, v.LeaderEpoch, v.Metadata = vd.Int64(), vd.Int32(), vd.String()
	v.CommitMs = vd.Int64()
	v.ProducerEpoch, v.Seq, v.Superseded = vd.Int16(), vd.Int64(), vd.Bool()
	if err := vd.Done(); err != nil {
		return wrapCorrupt("PendingTxnOffsetValue", err)
	}
	g, ok := st.Groups[k.group]
	if !ok {
		g = newSimpleClassicGroup(k.group)
		st.Groups[k.group] = g
	}
	k.group = g.ID()
	st.TxnOffsets.put(k, pid, v)
	return nil
}

// writePending writes a pending offset record.
func (st *State) writePending(k txnOffsetKey, pid int64, v *PendingOffset) {
	st.Write(Record{Key: pendingOffsetKey(k, pid), Value: pendingOffsetValue(v)})
}

// writePendingTombstone deletes a pending offset record.
func (st *State) writePendingTombstone(k txnOffsetKey, pid int64) {
	st.Write(Record{Key: pendingOffsetKey(k, pid)})
}

// supersedePending marks the pending offsets of a partition staged before seq (every one for
// seq < 0: a plain commit) as superseded by a committed offset written now.
func (st *State) supersedePending(group, topic string, partition int32, seq int64) {
	for _, pid := range st.TxnOffsets.Producers(group, topic, partition) {
		v, _ := st.TxnOffsets.Get(group, topic, partition, pid)
		if v.Superseded || (seq >= 0 && v.Seq >= seq) {
			continue
		}
		nv := *v
		nv.Superseded = true
		st.writePending(txnOffsetKey{group, topic, partition}, pid, &nv)
	}
}

// deletePending tombstones every pending offset of a partition (its committed offset is being
// deleted: Kafka removes the partition from every open transaction).
func (st *State) deletePending(group, topic string, partition int32) {
	for _, pid := range st.TxnOffsets.Producers(group, topic, partition) {
		st.writePendingTombstone(txnOffsetKey{group, topic, partition}, pid)
	}
}

// hasAnyOffsets reports whether a group has committed or pending offsets (what keeps a simple
// group alive across a reload).
func (st *State) hasAnyOffsets(group string) bool {
	return st.Offsets.HasOffsets(group) || st.TxnOffsets.HasGroup(group)
}

// CompleteTransaction applies a transaction marker for producer pid to the shard (Kafka's
// GroupCoordinatorShard.replayEndTransactionMarker via completeTransaction): COMMIT
// materializes the producer's pending offsets that no later commit superseded, each one
// superseding the older pending offsets of its partition; ABORT drops them. Either way the
// producer's pending records are tombstoned, in one batch. A marker for a producer without
// pending offsets changes nothing.
func CompleteTransaction(pid int64, epoch int16, commit bool) func(st *State, c *Call[Ack]) {
	return func(st *State, c *Call[Ack]) {
		keys := make([]txnOffsetKey, 0, len(st.TxnOffsets.byProducer[pid]))
		for k := range st.TxnOffsets.byProducer[pid] {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.group != b.group {
				return a.group < b.group
			}
			if a.topic != b.topic {
				return a.topic < b.topic
			}
			return a.partition < b.partition
		})
		for _, k := range keys {
			v, _ := st.TxnOffsets.Get(k.group, k.topic, k.partition, pid)
			if commit && !v.Superseded {
				st.WriteOffset(k.group, k.topic, k.partition, &OffsetValue{Offset: v.Offset,
					LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata, CommitMs: v.CommitMs})
				st.supersedePending(k.group, k.topic, k.partition, v.Seq)
			} else if commit {
				st.Log.Debug("skipped the materialization of a transactional offset commit that a later commit superseded",
					"group", k.group, "topic", k.topic, "partition", k.partition, "producer_id", pid)
			}
			st.writePendingTombstone(k, pid)
		}
		c.Reply(st, Ack{})
	}
}

// PendingTransactions lists the producers with pending offsets on the shard (sorted), for the
// transaction coordinator's recovery and operators.
func PendingTransactions() func(st *State, c *Call[[]int64]) {
	return func(st *State, c *Call[[]int64]) { c.Reply(st, st.TxnOffsets.ProducerIDs()) }
}

// TxnOffsetCommit handles TxnOffsetCommit v0–v4 (Kafka's
// OffsetMetadataManager.commitTransactionalOffset; the wire handler first verifies with the
// transaction coordinator that the group's partition is in the producer's transaction and
// answers partitions of unknown topics UNKNOWN_TOPIC_OR_PARTITION). A missing group is created
// as a simple group when GenerationId < 0, else ILLEGAL_GENERATION; the group validates the
// committer as a transactional commit (KIP-447: generation or member epoch, member and
// instance ids; a commit without identity is accepted), STALE_MEMBER_EPOCH answering
// ILLEGAL_GENERATION. Each partition's offset is staged as the producer's pending offset
// (OFFSET_METADATA_TOO_LARGE per partition) until the transaction's marker.
func TxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) func(st *State, c *Call[*kmsg.TxnOffsetCommitResponse]) {
	return func(st *State, c *Call[*kmsg.TxnOffsetCommitResponse]) {
		resp := TxnOffsetCommitResponse(req, nil)
		err := validateTxnOffsetCommit(st, req)
		perr, _ := err.(*PartitionErrors)
		if err != nil && perr == nil {
			setAllTxnCommitErrors(resp, err)
			c.Reply(st, resp)
			return
		}
		for ti, t := range req.Topics {
			for pi, p := range t.Partitions {
				rp := &resp.Topics[ti].Partitions[pi]
				if code := perr.Code(t.Topic, p.Partition); code != 0 {
					rp.ErrorCode = code
					continue
				}
				md := ""
				if p.Metadata != nil {
					md = *p.Metadata
				}
				if javaLength(md) > st.Cfg.Offsets.MetadataMaxBytes {
					rp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
					continue
				}
				epoch := int32(-1)
				if req.Version >= 2 {
					epoch = p.LeaderEpoch
				}
				st.writePending(txnOffsetKey{req.Group, t.Topic, p.Partition}, req.ProducerID, &PendingOffset{
					OffsetValue:   OffsetValue{Offset: p.Offset, LeaderEpoch: epoch, Metadata: md, CommitMs: st.Now.UnixMilli()},
					ProducerEpoch: req.ProducerEpoch, Seq: st.TxnOffsets.nextSeq,
				})
				st.Metrics.OffsetCommits++
			}
		}
		c.Reply(st, resp)
	}
}

func validateTxnOffsetCommit(st *State, req *kmsg.TxnOffsetCommitRequest) error {
	gen, member, instance := int32(-1), "", (*string)(nil)
	if req.Version >= 3 {
		gen, member, instance = req.Generation, req.MemberID, req.InstanceID
	}
	g, ok := st.Groups[req.Group]
	if !ok {
		if gen < 0 {
			return nil // a simple group is created by the first record's replay
		}
		return kerr.IllegalGeneration
	}
	err := g.ValidateOffsetCommit(st, &CommitIdentity{
		MemberID: member, InstanceID: instance, GenerationOrEpoch: gen, APIVersion: req.Version, Transactional: true,
		Partitions: commitPartitions(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) (string, []int32) {
			ps := make([]int32, len(t.Partitions))
			for i, p := range t.Partitions {
				ps[i] = p.Partition
			}
			return t.Topic, ps
		}),
	})
	if errors.Is(err, kerr.StaleMemberEpoch) {
		return kerr.IllegalGeneration
	}
	if perr, ok := err.(*PartitionErrors); ok {
		for _, parts := range perr.Errs {
			for p, e := range parts {
				if e == kerr.StaleMemberEpoch {
					parts[p] = kerr.IllegalGeneration
				}
			}
		}
	}
	return err
}

// TxnOffsetCommitResponse is the response to req with every partition answered NONE (or
// err's code, when err is non-nil).
func TxnOffsetCommitResponse(req *kmsg.TxnOffsetCommitRequest, err error) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if err != nil {
		setAllTxnCommitErrors(resp, err)
	}
	return resp
}

func setAllTxnCommitErrors(resp *kmsg.TxnOffsetCommitResponse, err error) {
	code := ErrorCode(err)
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			resp.Topics[i].Partitions[j].ErrorCode = code
		}
	}
}
