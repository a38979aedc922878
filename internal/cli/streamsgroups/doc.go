// Package streamsgroups implements `muster streams-groups`, a Go counterpart
// of Kafka's kafka-streams-groups.sh (StreamsGroupCommand, Kafka 4.1–4.4)
// that works against any broker serving the streams rebalance protocol
// (KIP-1071: StreamsGroupHeartbeat 88, StreamsGroupDescribe 89).
//
// Exactly one action is required:
//
//	--list [--state [s,...]]                 streams group ids; with --state a GROUP STATE table
//	--describe --group g|--all-groups        default view --offsets (GROUP TOPIC PARTITION OFFSET-LAG),
//	           [--offsets|--members|--state|--topology] [--verbose]
//	--delete --group g...|--all-groups       DeleteGroups (groups must be inactive)
//	--delete-offsets --group g --input-topic t[:p,...]|--all-input-topics
//	--reset-offsets --group g|--all-groups --input-topic t[:p]|--all-input-topics
//	           --to-earliest|--to-latest|--to-current|--to-offset n|--shift-by n|
//	           --to-datetime ts|--by-duration PnDTnHnMnS  --dry-run|--execute [--export]
//
// Common options: --bootstrap-server (required), --command-config (client
// properties, as for consumer-groups), --timeout (ms, default 30000),
// --verbose.
//
// --topology (KIP-1331) asks StreamsGroupDescribe v1 with
// IncludeTopologyDescription=true and prints the stored topology
// description as Kafka's Topology#describe() text; --format dot or mermaid
// renders it as a Graphviz or Mermaid graph instead (a muster extension). It
// exits 0 when the status is AVAILABLE and 1 for NOT_STORED ("No topology
// description is stored for streams group '<id>'."), ERROR ("The broker
// failed to fetch the topology description for streams group '<id>'. See the
// broker logs for details.") or a non-zero group error code.
//
// Exit codes follow KAFKA-19537: 0 on success, 1 on a usage error or any
// failure; messages go to stderr. The command returns a
// *clikit.ExitError carrying the code.
package streamsgroups
