package coordinator

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Record type ids: the int16 that starts every record key, as in Kafka's __consumer_offsets
// (CoordinatorRecordType). OffsetCommit and GroupMetadata use kmsg's codecs; the rest use Enc/Dec with
// the layouts in docs/records.md.
const (
	RecOffsetCommit                int16 = 1
	RecGroupMetadata               int16 = 2
	RecConsumerGroupMetadata       int16 = 3
	RecConsumerGroupMemberMetadata int16 = 5
	RecConsumerGroupTargetMetadata int16 = 6
	RecConsumerGroupTargetMember   int16 = 7
	RecConsumerGroupCurrentMember  int16 = 8
	RecConsumerGroupRegex          int16 = 16
	RecStreamsGroupMetadata        int16 = 17
	RecStreamsGroupMemberMetadata  int16 = 19
	RecStreamsGroupTargetMetadata  int16 = 20
	RecStreamsGroupTargetMember    int16 = 21
	RecStreamsGroupCurrentMember   int16 = 22
	RecStreamsGroupTopology        int16 = 23
)

// Record is a coordinator record: key and value bytes, a nil value being a tombstone (the
// layouts are in docs/records.md).
type Record struct {
	Key, Value []byte
}

// RecordType returns the type id of a record key.
func RecordType(key []byte) (int16, error) {
	if len(key) < 2 {
		return 0, fmt.Errorf("%w: key of %d bytes", ErrCorruptRecord, len(key))
	}
	return int16(binary.BigEndian.Uint16(key)), nil
}

// replay applies one record to the state (Kafka's GroupCoordinatorShard.replay). A value of nil
// is a tombstone. Every replay function is a pure function of (state, key, value) and does not
// depend on the order of records with other keys (loads come in key order). Unknown types are an
// error: a newer muster wrote them.
func (st *State) replay(r Record) error {
	typ, err := RecordType(r.Key)
	if err != nil {
		return err
	}
	k, v := r.Key, r.Value
	switch typ {
	case 0, RecOffsetCommit: // key version 0 is the same record
		return replayOffsetCommit(st, k, v)
	case RecGroupMetadata:
		return replayGroupMetadata(st, k, v)
	case RecConsumerGroupMetadata:
		return replayCGMetadata(st, k, v)
	case RecConsumerGroupMemberMetadata:
		return replayCGMember(st, k, v)
	case RecConsumerGroupTargetMetadata:
		return replayCGTargetMeta(st, k, v)
	case RecConsumerGroupTargetMember:
		return replayCGTargetMember(st, k, v)
	case RecConsumerGroupCurrentMember:
		return replayCGCurrent(st, k, v)
	case RecConsumerGroupRegex:
		return replayCGRegex(st, k, v)
	case RecStreamsGroupMetadata:
		return replayStreams(st, k, v, 0, replayStreamsMetadata)
	case RecStreamsGroupMemberMetadata:
		return replayStreams(st, k, v, 1, replayStreamsMember)
	case RecStreamsGroupTargetMetadata:
		return replayStreams(st, k, v, 0, replayStreamsTargetMetadata)
	case RecStreamsGroupTargetMember:
		return replayStreams(st, k, v, 1, replayStreamsTargetMember)
	case RecStreamsGroupCurrentMember:
		return replayStreams(st, k, v, 1, replayStreamsCurrentMember)
	case RecStreamsGroupTopology:
		return replayStreams(st, k, v, 0, replayStreamsTopology)
	case RecRebalanceHistory:
		return replayHistory(st, k, v)
	case RecPendingTxnOffset:
		return replayPendingOffset(st, k, v)
	case RecShareGroupMetadata:
		return replayShare(st, k, v, 0, replayShareMetadata)
	case RecShareGroupMemberMetadata:
		return replayShare(st, k, v, 1, replayShareMember)
	case RecShareGroupTargetMetadata:
		return replayShare(st, k, v, 0, replayShareTargetMeta)
	case RecShareGroupTargetMember:
		return replayShare(st, k, v, 1, replayShareTargetMember)
	case RecShareGroupCurrentMember:
		return replayShare(st, k, v, 1, replayShareCurrent)
	case RecSharePartitionState:
		return replaySharePartition(st, k, v)
	}
	return fmt.Errorf("%w: unknown record type %d", ErrCorruptRecord, typ)
}

// ReplayBorrowed is Replay for a record whose bytes are valid only during the call (a borrowing
// store load): offset records are replayed in place (their replay keeps no reference to the
// bytes); any other record is first copied, in one allocation, since its replay may keep slices
// of it.
func (st *State) ReplayBorrowed(r Record) error {
	st.Loading = true
	if typ, err := RecordType(r.Key); err == nil && (typ == RecOffsetCommit || typ == 0) {
		return st.replay(r)
	}
	buf := make([]byte, len(r.Key)+len(r.Value))
	n := copy(buf, r.Key)
	copy(buf[n:], r.Value)
	c := Record{Key: buf[:n:n]}
	if r.Value != nil {
		c.Value = buf[n:]
	}
	return st.replay(c)
}

// groupKey builds the common key shape "type, group id" (and optional extra strings).
func groupKey(typ int16, group string, extra ...string) []byte {
	e := Enc{B: make([]byte, 0, 4+len(group)+16)}
	e.Int16(typ)
	e.String(group)
	for _, x := range extra {
		e.String(x)
	}
	return e.B
}

// parseGroupKey reads "type, group id, n extra strings".
func parseGroupKey(key []byte, extra int) (group string, rest []string, err error) {
	d := Dec{B: key[2:]}
	group = d.String()
	for i := 0; i < extra; i++ {
		rest = append(rest, d.String())
	}
	return group, rest, d.Done()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
