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
//	                                                  and retention
//	'd' 'q' topicID(16) partition(4) producerID(8) baseOffset(8)
//	                                               → idempotent-producer batch metadata:
//	                                                  epoch(2) firstSeq(4) lastOffsetDelta(4)
//	                                                  appendTimeMs(8); dropped after
//	                                                  producer.id.expiration.ms
//	'd' 'i'                                        → next producer ID (8)
//	'd' 'm' topicID(16) partition(4) baseOffset(8)  → a sealed log segment: its end offset,
//	                                                  bytes, first and largest timestamps
//	'd' 'c' topicID(16) partition(4)               → the log cleaner's checkpoint: the first
//	                                                  offset not yet cleaned (8)
//	'd' 'b' resource                               → dynamic broker configs (JSON) of this
//	                                                  broker (node id) or the cluster ("")
//	'd' 'g' group                                  → dynamic group configs (JSON)
//	'd' 'o' topicID(16) partition(4) pid(8)        → a producer's open transaction: first
//	                                                  offset (8), epoch (2) (txn.go)
//	'd' 'a' topicID(16) partition(4) last(8) pid(8) → an aborted transaction: first offset (8);
//	                                                  last is its ABORT marker's offset
//	'd' 'e' topicID(16) partition(4) pid(8)        → the producer's last transaction marker:
//	                                                  epoch (2), coordinator epoch (4), kind
//	                                                  (1), time (8)
//
// The high watermark is not stored: on Open it is the end of the last batch of
// each partition (or the log start offset when the log is empty). Producer
// state is one key per retained batch (the last five per producer and
// partition), written in the same Pebble batch as the records, so concurrent
// commits landing in any order leave the same set of keys.
//
// # Segments
//
// A partition's log is a run of segments (Kafka's LogSegment): offset ranges
// whose statistics are kept in memory and, once sealed, under 'd' 'm'. The
// last segment is active; an append seals it first when the batch would take
// it past segment.bytes or when the batch's timestamp is segment.ms (for a
// compacted topic at most max.compaction.lag.ms) past the segment's first
// batch. The active segment is never compacted.
//
// # Retention
//
// Every log.retention.check.interval.ms the plane applies each topic's
// retention.ms and retention.bytes (defaults: the broker's log.retention.*)
// with Kafka's rules at batch granularity: whole batches leave from the log
// start, by max timestamp against Config.Now, then by size; the log start
// offset advances and the sealed segments it passes are dropped. Topics
// whose cleanup.policy lacks "delete" are left to the cleaner.
//
// # Compaction
//
// The log cleaner (Kafka's LogCleaner) compacts topics whose cleanup.policy
// includes "compact": every log.cleaner.backoff.ms when idle, up to
// log.cleaner.threads partitions at once, filthiest first, those whose dirty
// ratio passes min.cleanable.dirty.ratio or that max.compaction.lag.ms
// forces. It maps each key of the dirty section (sealed segments from the
// checkpoint, stopping at min.compaction.lag.ms) to its latest offset, then
// rewrites the sealed segments keeping the latest record of each key;
// tombstones stay delete.retention.ms after the cleaning that first reaches
// them (the batch's delete horizon, KIP-534). Offsets never change: a batch
// keeps its base offset and last offset delta, an emptied batch goes unless
// it is a producer's last or the round's last (kept empty). Compressed
// batches are rewritten with their codec. Each Pebble batch the cleaner
// commits replaces whole record batches, so a crash leaves every batch
// either old or cleaned: no retained record is lost or duplicated.
//
// # Internal topics
//
// Kafka's internal topics (__consumer_offsets, __transaction_state,
// __share_group_state) are listed with IsInternal and belong to their
// coordinator: a client never creates one (Metadata auto-creation answers
// UNKNOWN_TOPIC_OR_PARTITION, CreateTopics INVALID_REQUEST) and never
// produces to, deletes, resizes or trims one (INVALID_TOPIC_EXCEPTION).
// __consumer_offsets exists from the start with one partition per group
// coordinator shard (offsets.topic.num.partitions), compacted; the
// coordinator store appends each batch of records it commits to the shard's
// partition inside the same Pebble batch (AppendGroupMetadata), in Kafka's
// record format, so consumers of the topic read what the coordinator holds.
//
// # Configs
//
// Topic configs (CreateTopics, AlterConfigs, IncrementalAlterConfigs) are
// validated with Kafka's LogConfig rules and apply at once; the broker's
// dynamic configs (the keys Kafka's DynamicBrokerConfig allows) are layered
// over the static configuration (config.Layers) and change the defaults of
// every topic without an override; group configs (KIP-848) are stored for the
// coordinator, which reads them through config.GroupConfigs.
//
// # Compression
//
// Batches are stored as the producer compressed them. The broker decompresses
// (gzip, snappy raw or xerial-framed, lz4, zstd; at most 64 MiB per batch)
// to find a record by timestamp for ListOffsets, to check the keys of a
// batch for a compacted topic, and to compact.
//
// # Concurrency
//
// Offsets are assigned under a per-partition mutex; the Pebble commit (with
// Sync for acks≠0) runs outside it, so concurrent produces group-commit inside
// Pebble. The high watermark advances over the contiguous prefix of finished
// appends only, so a fetch never sees a hole that a slower commit will fill.
package data
