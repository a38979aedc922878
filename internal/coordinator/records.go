package coordinator

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/muster-io/muster/internal/store"
)

// Record type ids: the int16 that starts every record key, as in Kafka's __consumer_offsets
// (reference §4). OffsetCommit and GroupMetadata use kmsg's codecs; the rest use Enc/Dec with
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

// Record is a coordinator record (key and value bytes; nil value = tombstone).
type Record = store.Record

// ReplayFunc applies one record to the shard state. value is nil for a tombstone. It must be a
// pure function of (state, key, value) and must not depend on the order of records with other
// keys (loads come in key order).
type ReplayFunc func(st *State, key, value []byte) error

var replayers = map[int16]ReplayFunc{}

// RegisterReplay installs the replay function of a record type; each group type registers its
// own from an init function in its own file.
func RegisterReplay(typ int16, fn ReplayFunc) {
	if _, dup := replayers[typ]; dup {
		panic(fmt.Sprintf("coordinator: replay for record type %d registered twice", typ))
	}
	replayers[typ] = fn
}

// RecordType returns the type id of a record key.
func RecordType(key []byte) (int16, error) {
	if len(key) < 2 {
		return 0, fmt.Errorf("%w: key of %d bytes", ErrCorruptRecord, len(key))
	}
	return int16(binary.BigEndian.Uint16(key)), nil
}

// replay dispatches one record. Unknown types are an error (a newer muster wrote them).
func (st *State) replay(r Record) error {
	typ, err := RecordType(r.Key)
	if err != nil {
		return err
	}
	if typ != RecOffsetCommit && typ != 0 {
		st.Offsets.flush() // a pending run of loaded offsets ends with the first other record
	}
	fn, ok := replayers[typ]
	if !ok {
		return fmt.Errorf("%w: unknown record type %d", ErrCorruptRecord, typ)
	}
	return fn(st, r.Key, r.Value)
}

// replayBorrowed replays a record whose bytes are valid only during the call (a borrowing store
// load): offset records are replayed in place (their replay keeps no reference to the bytes);
// any other record is first copied, in one allocation, since its replay may keep slices of it.
func (st *State) replayBorrowed(r Record) error {
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

// dedupe keeps the last record per key, preserving first-seen order of keys; a batch's keys must
// be distinct for the store.
func dedupe(recs []Record) []Record {
	if len(recs) < 2 {
		return recs
	}
	idx := make(map[string]int, len(recs))
	out := recs[:0:0]
	for _, r := range recs {
		if i, ok := idx[string(r.Key)]; ok {
			out[i] = r
			continue
		}
		idx[string(r.Key)] = len(out)
		out = append(out, r)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
