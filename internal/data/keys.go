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

func logStartKey(id [16]byte, partition int32) []byte {
	return partPrefix(kindLogStart, id, partition)
}

func producerBatchKey(id [16]byte, partition int32, pid, base int64) []byte {
	k := partPrefix(kindProducerBatch, id, partition)
	k = binary.BigEndian.AppendUint64(k, uint64(pid))
	return binary.BigEndian.AppendUint64(k, uint64(base))
}

func openTxnKey(id [16]byte, partition int32, pid int64) []byte {
	return binary.BigEndian.AppendUint64(partPrefix(kindOpenTxn, id, partition), uint64(pid))
}

func abortedTxnKey(id [16]byte, partition int32, lastOffset, pid int64) []byte {
	k := binary.BigEndian.AppendUint64(partPrefix(kindAbortedTxn, id, partition), uint64(lastOffset))
	return binary.BigEndian.AppendUint64(k, uint64(pid))
}

func producerEpochKey(id [16]byte, partition int32, pid int64) []byte {
	return binary.BigEndian.AppendUint64(partPrefix(kindProducerEpoch, id, partition), uint64(pid))
}

func nextPIDKey() []byte { return []byte{keyPrefix, kindNextPID} }

func segmentKey(id [16]byte, partition int32, base int64) []byte {
	return binary.BigEndian.AppendUint64(partPrefix(kindSegment, id, partition), uint64(base))
}

func cleanerCheckpointKey(id [16]byte, partition int32) []byte {
	return partPrefix(kindCleanerCheckpoint, id, partition)
}

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
