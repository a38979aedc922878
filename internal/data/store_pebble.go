package data

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store/diskguard"
)

// pebbleStore is the embedded Store: everything under the 'd' prefix of the server's shared
// Pebble DB (the package doc has the layout), every write through the disk guard.
type pebbleStore struct {
	db    *pebble.DB
	guard *diskguard.Guard
}

// NewPebbleStore is the data plane's Store in db (keys under 'd'), written through guard (nil:
// every write is attempted).
func NewPebbleStore(db *pebble.DB, guard *diskguard.Guard) Store {
	return &pebbleStore{db: db, guard: guard}
}

func (s *pebbleStore) commit(w diskguard.Write, fn func() error) error { return s.guard.Commit(w, fn) }

// stateKey is the Pebble key of a state key of part.
func stateKey(dst []byte, part PartitionID, kind byte, key []byte) []byte {
	dst = append(dst[:0], keyPrefix, kind)
	dst = append(dst, part.Topic[:]...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(part.Index))
	return append(dst, key...)
}

// Write implements LogStore: one Pebble batch, committed with Sync unless w.NoSync.
func (s *pebbleStore) Write(w *LogWrite) func() error {
	b := s.db.NewBatch()
	var key []byte
	for i := range w.Append {
		sb := &w.Append[i]
		key = stateKey(key, w.Part, kindLog, nil)
		key = binary.BigEndian.AppendUint64(key, uint64(sb.Base))
		if sb.Stamp {
			// Built straight in the batch's buffer: one copy of the producer's bytes.
			op := b.SetDeferred(len(key), len(sb.Data))
			copy(op.Key, key)
			copy(op.Value, sb.Data)
			sb.stamped(op.Value, w.Epoch)
			_ = op.Finish()
		} else {
			_ = b.Set(key, sb.Data, nil)
		}
		s.guard.Spend(len(sb.Data))
	}
	for _, sb := range w.Replace {
		key = stateKey(key, w.Part, kindLog, nil)
		key = binary.BigEndian.AppendUint64(key, uint64(sb.Base))
		_ = b.Set(key, sb.Data, nil)
	}
	for _, base := range w.Drop {
		key = stateKey(key, w.Part, kindLog, nil)
		key = binary.BigEndian.AppendUint64(key, uint64(base))
		_ = b.Delete(key, nil)
	}
	if w.TruncateBelow > 0 {
		_ = b.DeleteRange(logKey(w.Part.Topic, w.Part.Index, 0), logKey(w.Part.Topic, w.Part.Index, w.TruncateBelow), nil)
	}
	for _, op := range w.State {
		key = stateKey(key, w.Part, op.Kind, op.Key)
		if op.Value == nil {
			_ = b.Delete(key, nil)
		} else {
			_ = b.Set(key, op.Value, nil)
		}
	}
	for _, op := range w.StateBelow {
		_ = b.DeleteRange(partPrefix(op.Kind, w.Part.Topic, w.Part.Index), stateKey(nil, w.Part, op.Kind, op.Key), nil)
	}
	if w.Op == diskguard.Produce && !w.NoSync {
		// Applied in order (offsets, WAL position) now, synced while the connection's next
		// request appends: a later sync covers this batch too, and a failed sync is sticky.
		err := s.commit(w.Op, func() error { return s.db.ApplyNoSyncWait(b, pebble.Sync) })
		if err != nil {
			_ = b.Close()
			return func() error { return err }
		}
		return func() error {
			defer b.Close()
			if serr := b.SyncWait(); serr != nil {
				s.guard.Fail(serr)
				return &diskguard.CommitError{Reason: serr.Error()}
			}
			return nil
		}
	}
	opts := pebble.Sync
	if w.NoSync {
		opts = pebble.NoSync
	}
	err := s.commit(w.Op, func() error { return b.Commit(opts) })
	_ = b.Close()
	if err != nil {
		return func() error { return err }
	}
	switch {
	case w.TruncateBelow > 0:
		// While space is short, the guard compacts the deleted range at once.
		s.guard.Reclaim(logKey(w.Part.Topic, w.Part.Index, 0), logKey(w.Part.Topic, w.Part.Index, w.TruncateBelow))
	case w.Op == diskguard.Compaction:
		pre := partPrefix(kindLog, w.Part.Topic, w.Part.Index)
		s.guard.Reclaim(pre, prefixEnd(pre))
	}
	return writeDone
}

// Read implements LogStore.
func (s *pebbleStore) Read(part PartitionID, from, to int64, fn func(data []byte) bool) error {
	prefix := partPrefix(kindLog, part.Topic, part.Index)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: logKey(part.Topic, part.Index, max(to, 0))})
	if err != nil {
		return err
	}
	defer it.Close()
	// The batch holding from starts at or before it; otherwise (a gap or a compacted range)
	// start at the next batch.
	ok := it.SeekLT(logKey(part.Topic, part.Index, from+1))
	if ok {
		if h, hok := readBatchHeader(it.Value()); !hok || h.lastOffset() < from {
			ok = it.Next()
		}
	} else {
		ok = it.SeekGE(logKey(part.Topic, part.Index, max(from, 0)))
	}
	for ; ok; ok = it.Next() {
		if !fn(it.Value()) {
			break
		}
	}
	return it.Error()
}

// Bounds implements LogStore.
func (s *pebbleStore) Bounds(part PartitionID) (first, end int64, ok bool, err error) {
	prefix := partPrefix(kindLog, part.Topic, part.Index)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return 0, 0, false, err
	}
	defer it.Close()
	if !it.First() {
		return 0, 0, false, it.Error()
	}
	h, hok := readBatchHeader(it.Value())
	if !hok {
		return 0, 0, false, fmt.Errorf("data: partition %d: corrupt stored batch", part.Index)
	}
	first = h.BaseOffset
	it.Last()
	if h, hok = readBatchHeader(it.Value()); !hok {
		return 0, 0, false, fmt.Errorf("data: partition %d: corrupt stored batch", part.Index)
	}
	return first, h.lastOffset() + 1, true, it.Error()
}

// Stats implements LogStore by reading the batches.
func (s *pebbleStore) Stats(part PartitionID, from, to int64) (bytes, firstMaxTs, largestMaxTs int64, err error) {
	firstMaxTs, largestMaxTs = -1, -1
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: logKey(part.Topic, part.Index, max(from, 0)),
		UpperBound: logKey(part.Topic, part.Index, max(to, 0))})
	if err != nil {
		return 0, 0, 0, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		h, hok := readBatchHeader(it.Value())
		if !hok {
			continue
		}
		if bytes == 0 {
			firstMaxTs = h.MaxTimestamp
		}
		bytes += int64(len(it.Value()))
		largestMaxTs = max(largestMaxTs, h.MaxTimestamp)
	}
	return bytes, firstMaxTs, largestMaxTs, it.Error()
}

// State implements LogStore.
func (s *pebbleStore) State(part PartitionID, kind byte, fn func(key, value []byte) error) error {
	prefix := partPrefix(kind, part.Topic, part.Index)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key()[len(prefix):], it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// Lead implements LogStore (nothing to do: Pebble caches what is read).
func (s *pebbleStore) Lead(PartitionID, int64) {}

// Unlead implements LogStore.
func (s *pebbleStore) Unlead(PartitionID) {}

// topicRecord is the stored form of a topic under 'd' 't' name.
type topicRecord struct {
	ID         string            `json:"id"` // 32 hex digits
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

func encodeTopicRecord(rec TopicRecord) []byte {
	b, _ := json.Marshal(topicRecord{ID: hex.EncodeToString(rec.ID[:]), Partitions: rec.Partitions, Configs: rec.Configs})
	return b
}

// Topics implements Catalog.
func (s *pebbleStore) Topics() ([]TopicRecord, error) {
	prefix := []byte{keyPrefix, kindTopic}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("data: load topics: %w", err)
	}
	defer it.Close()
	var out []TopicRecord
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[2:])
		var rec topicRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("data: topic %q: %w", name, err)
		}
		idb, err := hex.DecodeString(rec.ID)
		if err != nil || len(idb) != 16 || rec.Partitions < 0 {
			return nil, fmt.Errorf("data: topic %q: bad record", name)
		}
		out = append(out, TopicRecord{ID: [16]byte(idb), Name: name, Partitions: rec.Partitions, Configs: rec.Configs})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("data: load topics: %w", err)
	}
	return out, nil
}

// CreateTopic implements Catalog (the plane checks the name is free under its admin lock).
func (s *pebbleStore) CreateTopic(rec TopicRecord) error {
	return s.commit(diskguard.CreateTopics, func() error {
		return s.db.Set(topicKey(rec.Name), encodeTopicRecord(rec), pebble.Sync)
	})
}

// UpdateTopic implements Catalog.
func (s *pebbleStore) UpdateTopic(rec TopicRecord, op diskguard.Write) error {
	return s.commit(op, func() error { return s.db.Set(topicKey(rec.Name), encodeTopicRecord(rec), pebble.Sync) })
}

// topicKinds are the kinds of keys a topic's partitions have.
var topicKinds = []byte{kindLog, kindLogStart, kindProducerBatch, kindSegment, kindCleanerCheckpoint, kindOpenTxn, kindAbortedTxn, kindProducerEpoch}

// DeleteTopic implements Catalog: one batch deletes the topic and every key of its partitions.
func (s *pebbleStore) DeleteTopic(rec TopicRecord) error {
	b := s.db.NewBatch()
	_ = b.Delete(topicKey(rec.Name), nil)
	for _, kind := range topicKinds {
		pre := topicPrefix(kind, rec.ID)
		_ = b.DeleteRange(pre, prefixEnd(pre), nil)
	}
	err := s.commit(diskguard.DeleteTopics, func() error { return b.Commit(pebble.Sync) })
	_ = b.Close()
	if err == nil {
		// While space is short, the guard compacts the deleted keys at once.
		for _, kind := range []byte{kindLog, kindProducerBatch} {
			pre := topicPrefix(kind, rec.ID)
			s.guard.Reclaim(pre, prefixEnd(pre))
		}
	}
	return err
}

// BrokerConfigs implements Catalog.
func (s *pebbleStore) BrokerConfigs(res string) (map[string]string, error) {
	v, closer, err := s.db.Get(nameKey(kindBrokerConfig, res))
	if err == pebble.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("data: load dynamic broker configs: %w", err)
	}
	defer closer.Close()
	m := map[string]string{}
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("data: dynamic broker configs %q: %w", res, err)
	}
	return m, nil
}

// SetBrokerConfigs implements Catalog.
func (s *pebbleStore) SetBrokerConfigs(res string, m map[string]string) error {
	return s.setJSON(nameKey(kindBrokerConfig, res), m)
}

func (s *pebbleStore) setJSON(key []byte, m map[string]string) error {
	return s.commit(diskguard.Configs, func() error {
		if len(m) == 0 {
			return s.db.Delete(key, pebble.Sync)
		}
		b, _ := json.Marshal(m)
		return s.db.Set(key, b, pebble.Sync)
	})
}

// GroupConfigs implements Catalog.
func (s *pebbleStore) GroupConfigs() (map[string]map[string]string, error) {
	prefix := []byte{keyPrefix, kindGroupConfig}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("data: load group configs: %w", err)
	}
	defer it.Close()
	out := map[string]map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		group := string(it.Key()[2:])
		m := map[string]string{}
		if err := json.Unmarshal(it.Value(), &m); err != nil {
			return nil, fmt.Errorf("data: group configs of %q: %w", group, err)
		}
		out[group] = m
	}
	return out, it.Error()
}

// SetGroupConfigs implements Catalog.
func (s *pebbleStore) SetGroupConfigs(group string, m map[string]string) error {
	return s.setJSON(nameKey(kindGroupConfig, group), m)
}

// ReserveProducerIDs implements Catalog: the stored value is the end of the last reserved block.
func (s *pebbleStore) ReserveProducerIDs(n int64) (int64, error) {
	var next int64
	v, closer, err := s.db.Get(nextPIDKey())
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return 0, fmt.Errorf("data: load producer id: %w", err)
	default:
		if len(v) == 8 {
			next = int64(binary.BigEndian.Uint64(v))
		}
		closer.Close()
	}
	if err := s.commit(diskguard.ProducerIDs, func() error {
		return s.db.Set(nextPIDKey(), binary.BigEndian.AppendUint64(nil, uint64(next+n)), pebble.Sync)
	}); err != nil {
		return 0, err
	}
	return next, nil
}
