// Package data is muster's data plane: topics, partitions and the record log
// behind Produce, Fetch, ListOffsets, Metadata and the topic admin APIs.
//
// muster is a single-node broker. This node leads every partition, the
// replication factor is reported as 1 (replicas = ISR = [NodeID]) and every
// leader epoch is 0.
//
// # Storage
//
// The plane stores everything in the server's shared Pebble DB under keys that
// start with the byte 'd' (the coordinator owns the other prefixes). Integers
// are big-endian so that byte order is numeric order:
//
//	'd' 't' name                                   → topic record (JSON: id, partitions, configs)
//	'd' 'l' topicID(16) partition(4) baseOffset(8)  → one record batch, stored as the
//	                                                  producer sent it, base offset and
//	                                                  partition leader epoch rewritten
//	'd' 's' topicID(16) partition(4)               → log start offset (8), written by DeleteRecords
//	'd' 'q' topicID(16) partition(4) producerID(8) baseOffset(8)
//	                                               → idempotent-producer batch metadata:
//	                                                  epoch(2) firstSeq(4) lastOffsetDelta(4)
//	                                                  appendTimeMs(8); dropped after
//	                                                  producer.id.expiration.ms
//	'd' 'i'                                        → next producer ID (8)
//
// The high watermark is not stored: on Open it is the end of the last batch of
// each partition (or the log start offset when the log is empty). Producer
// state is one key per retained batch (the last five per producer and
// partition), written in the same Pebble batch as the records, so concurrent
// commits landing in any order leave the same set of keys.
//
// # Concurrency
//
// Offsets are assigned under a per-partition mutex; the Pebble commit (with
// Sync for acks≠0) runs outside it, so concurrent produces group-commit inside
// Pebble. The high watermark advances over the contiguous prefix of finished
// appends only, so a fetch never sees a hole that a slower commit will fill.
package data
