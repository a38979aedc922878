// Package metahash computes the KIP-1101 topic and group metadata hashes
// (rebalance on topic metadata change).
//
// A consumer group stores one int64 metadata hash with its group epoch. The
// coordinator recomputes it from the metadata image of the subscribed topics
// and bumps the group epoch when it differs, so that adding partitions or
// moving replicas across racks triggers a new target assignment.
//
// Following KIP-1101 (not Kafka 4.1+, which moved to XXH3), the hash function
// is Murmur3: github.com/spaolacci/murmur3, x64 128-bit variant with seed 0,
// of which the first 64 bits (murmur3.Sum64) are used and read as int64.
//
// # Topic hash byte layout (version MagicByte = 0)
//
// TopicHash hashes one contiguous byte stream; all integers are little-endian:
//
//	offset  size  field
//	0       1     magic byte (hash version), MagicByte = 0x00
//	1       16    topic id, the 16 UUID bytes as given (most significant byte first)
//	17      4     uint32 length of the topic name in bytes
//	21      n     topic name, UTF-8 bytes
//	21+n    4     int32 partition count
//	then, for each partition p = 0 .. count-1 (ascending):
//	        4     int32 partition index p
//	        4     uint32 number of racks listed for p (duplicates counted)
//	        8     int64 rack sum of p
//
// The rack sum of a partition is the wrapping int64 sum, over every rack r of
// the partition's replicas, of int64(murmur3.Sum64(uint32 len(r) ‖ r)), the
// rack hashed as a 4-byte little-endian byte length followed by its UTF-8
// bytes. Hashing each rack separately and adding the results makes the topic
// hash independent of rack order (seed: "compute hash for each value in it and
// sum as a result"). A partition without racks contributes count 0, sum 0.
// A negative partition count is hashed as given, with no partition entries.
//
// # Group hash
//
// GroupHash sorts the topics by name (byte order) and returns the wrapping
// int64 sum of hash(i) * i for the 1-based position i, so that exchanging the
// hashes of two topics changes the result (seed: "sort topics by name and each
// hash value multiplied by the position value"). An empty map hashes to 0, the
// value a group record without the MetadataHash field carries.
//
// The same layout is described in docs/metadata-hash.md.
package metahash
