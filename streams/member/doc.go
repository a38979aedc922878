// Package member is a Kafka Streams group member written in Go: it joins a
// streams group (KIP-1071 "streams rebalance protocol") through
// StreamsGroupHeartbeat (API key 88) the way a Kafka Streams client does, and
// hands the tasks the group coordinator assigns to the application through
// callbacks.
//
// A Member runs one background goroutine, the heartbeat loop:
//
//   - It finds the group coordinator (FindCoordinator, key type 0) and sends
//     every request to that broker directly.
//   - It joins with member epoch 0 and the application's Topology (topology
//     epoch, subtopologies with their source, repartition and changelog
//     topics and copartition groups), its process id, user endpoint, client
//     tags, rack and rebalance timeout.
//   - It heartbeats every HeartbeatIntervalMs the coordinator returns,
//     reporting the active, standby and warm-up tasks it owns.
//   - When a response carries a new assignment it first revokes tasks it no
//     longer owns (OnRevoked, revoke-before-assign), then acquires the new
//     ones (OnAssigned); the next heartbeat, sent at once, acknowledges the
//     change by reporting only the tasks it still owns.
//   - Close revokes everything and leaves the group (member epoch -1, or -2
//     for a static member with an InstanceID).
//
// Callbacks run on the heartbeat loop goroutine, one at a time: no
// heartbeat is sent while one runs, so they should finish well within the
// group's session timeout (group.streams.session.timeout.ms, 45 s by
// default), and they must not call Close (which waits for the loop).
// CommitTaskOffsets may be called from them.
//
// Errors follow Kafka's StreamsGroupHeartbeatRequestManager:
// FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID drop all tasks (OnLost, or
// OnRevoked when OnLost is nil) and rejoin with epoch 0; NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE (and
// network errors) rediscover the coordinator; COORDINATOR_LOAD_IN_PROGRESS is
// retried after a back-off; every other error code is fatal: the loop stops
// and Err reports it. The group's status list (STALE_TOPOLOGY,
// MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS,
// MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED, ...)
// of the latest heartbeat is exposed by Status; SHUTDOWN_APPLICATION also
// calls OnShutdownRequested once.
//
// # KIP-1331 topology description push
//
// With PushEnabled (topology.description.push.enabled, default true) and a
// TopologyDescription, the member records TopologyDescriptionRequired from
// every heartbeat response (StreamsGroupHeartbeat v1) and, on the next loop
// iteration, pushes the description with StreamsGroupTopologyDescriptionUpdate
// (API key 93) when the coordinator is known, the flag is set, the member id
// has been accepted by the coordinator and no push is in flight. The push
// runs on its own goroutine and never delays heartbeats or the
// application. The completion rules are those of KIP-1331 "Error Handling and
// Retries": NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE rediscover the
// coordinator and keep the flag; COORDINATOR_LOAD_IN_PROGRESS and network
// errors keep the flag (retried on the next iteration); UNKNOWN_MEMBER_ID
// clears the flag and lets the heartbeat path rejoin; any other error clears
// the flag and is logged at WARN; the member does not retry on its own. A
// non-zero ThrottleTimeMs delays the next push attempt.
//
// The flag is sticky: a response with TopologyDescriptionRequired=false
// does not clear a flag set by an earlier response, so a push that must be
// retried (load in progress, network error) is not lost because the broker
// only solicits one member per back-off window. Only push completion and
// leaving the group clear it.
//
// # Offsets
//
// CommitTaskOffsets commits offsets with OffsetCommit v9, carrying the
// member id and member epoch so the coordinator fences zombie members
// (STALE_MEMBER_EPOCH).
//
// # Exactly once (processing.guarantee=exactly_once_v2)
//
// With ProcessingGuarantee ExactlyOnceV2 each stream thread makes one transactional producer
// (NewTransactionalProducer; transactional id "<application.id>-<process id>-<thread index>",
// as Kafka Streams' exactly_once_v2, KIP-447). A thread processes a batch of its tasks' records
// in a transaction: Begin, Produce the results, then CommitTransaction with the offsets of the
// consumed input, which go to the group coordinator through TxnOffsetCommit with the member's id,
// epoch and instance id, so a member fenced meanwhile cannot commit (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID: abort and let the tasks go). Read the input with read_committed.
package member
