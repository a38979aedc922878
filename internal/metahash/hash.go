package metahash

import (
	"encoding/binary"
	"sort"

	"github.com/spaolacci/murmur3"
)

// MagicByte is the hash version written as the first byte of every topic
// hash stream (KIP-1101). Changing the layout requires a new value.
const MagicByte byte = 0

// TopicHash returns the KIP-1101 hash of one topic: its 16-byte id, its name,
// its partition count and, for each partition p in [0, numPartitions), the
// racks of p's replicas as returned by racks(p). racks may be nil (no rack
// information) and may return nil or duplicates; the order of the racks of a
// partition does not change the result. See the package documentation for the
// exact byte layout.
func TopicHash(id [16]byte, name string, numPartitions int32, racks func(p int32) []string) int64 {
	return topicHash(MagicByte, id, name, numPartitions, racks)
}

// topicHash is TopicHash with an explicit version byte.
func topicHash(magic byte, id [16]byte, name string, numPartitions int32, racks func(p int32) []string) int64 {
	n := 1 + 16 + 4 + len(name) + 4
	if numPartitions > 0 {
		n += int(numPartitions) * 16
	}
	buf := make([]byte, 0, n)
	buf = append(buf, magic)
	buf = append(buf, id[:]...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(name)))
	buf = append(buf, name...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(numPartitions))
	var scratch []byte
	for p := int32(0); p < numPartitions; p++ {
		var rs []string
		if racks != nil {
			rs = racks(p)
		}
		var sum int64
		for _, r := range rs {
			scratch = binary.LittleEndian.AppendUint32(scratch[:0], uint32(len(r)))
			scratch = append(scratch, r...)
			sum += int64(murmur3.Sum64(scratch))
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(p))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rs)))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(sum))
	}
	return int64(murmur3.Sum64(buf))
}

// GroupHash combines the hashes of a group's subscribed topics, keyed by topic
// name, into the group's metadata hash (KIP-1101): topics are sorted by name
// and the result is the wrapping int64 sum of each hash multiplied by its
// 1-based position. An empty or nil map returns 0.
func GroupHash(topicHashes map[string]int64) int64 {
	if len(topicHashes) == 0 {
		return 0
	}
	names := make([]string, 0, len(topicHashes))
	for name := range topicHashes {
		names = append(names, name)
	}
	sort.Strings(names)
	var sum int64
	for i, name := range names {
		sum += int64(i+1) * topicHashes[name]
	}
	return sum
}
