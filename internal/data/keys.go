package data

import "encoding/binary"

// Key prefixes owned by the data plane (see the package doc for the layout).
const (
	keyPrefix         = 'd'
	kindTopic         = 't'
	kindLog           = 'l'
	kindLogStart      = 's'
	kindProducerBatch = 'q'
	kindNextPID       = 'i'

	kindSegment           = 'm' // sealed segment: topicID partition base → segmentMeta
	kindCleanerCheckpoint = 'c' // topicID partition → first dirty offset (8)
	kindBrokerConfig      = 'b' // resource name ("" = cluster default) → dynamic broker configs (JSON)
	kindGroupConfig       = 'g' // group id → group configs (JSON)

	kindOpenTxn       = 'o' // topicID partition pid → the producer's open transaction (txn.go)
	kindAbortedTxn    = 'a' // topicID partition lastOffset pid → an aborted transaction (txn.go)
	kindProducerEpoch = 'e' // topicID partition pid → the producer's last transaction marker (txn.go)
)

func topicKey(name string) []byte {
	k := make([]byte, 0, 2+len(name))
	k = append(k, keyPrefix, kindTopic)
	return append(k, name...)
}

// partPrefix is kind + topicID + partition: the prefix of one partition's keys of kind.
func partPrefix(kind byte, id [16]byte, partition int32) []byte {
	k := make([]byte, 0, 2+16+4+16)
	k = append(k, keyPrefix, kind)
	k = append(k, id[:]...)
	return binary.BigEndian.AppendUint32(k, uint32(partition))
}

// topicPrefix is kind + topicID: the prefix of all of a topic's keys of kind.
func topicPrefix(kind byte, id [16]byte) []byte {
	k := make([]byte, 0, 2+16)
	k = append(k, keyPrefix, kind)
	return append(k, id[:]...)
}

func logKey(id [16]byte, partition int32, base int64) []byte {
	return binary.BigEndian.AppendUint64(partPrefix(kindLog, id, partition), uint64(base))
}

func nextPIDKey() []byte { return []byte{keyPrefix, kindNextPID} }

func nameKey(kind byte, name string) []byte {
	k := make([]byte, 0, 2+len(name))
	k = append(k, keyPrefix, kind)
	return append(k, name...)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// State keys within a partition (LogWrite.State, LogStore.State).

// producerStateKey is an idempotent producer's batch: producer id (8) base offset (8).
func producerStateKey(pid, base int64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(pid))
	return binary.BigEndian.AppendUint64(k, uint64(base))
}

// pidStateKey is a producer's open transaction or last marker: producer id (8).
func pidStateKey(pid int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(pid))
}

// abortedStateKey is an aborted transaction: its marker's offset (8) producer id (8).
func abortedStateKey(last, pid int64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(last))
	return binary.BigEndian.AppendUint64(k, uint64(pid))
}

// offsetStateKey is a sealed segment (its base offset) or the bound of a StateBelow (8).
func offsetStateKey(off int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(off))
}

// u64 is v as 8 big-endian bytes (a state value).
func u64(v int64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(v)) }
