// Package sharegroups implements `muster share-groups`, a Go counterpart of Kafka's
// kafka-share-groups.sh (ShareGroupCommand, Kafka 4.2) that works against any broker serving
// KIP-932 share groups (ShareGroupDescribe 77, DescribeShareGroupOffsets 90,
// AlterShareGroupOffsets 91, DeleteShareGroupOffsets 92).
//
// Exactly one action is required:
//
//	--list [--state [s,...]]                 share group ids; with --state a GROUP STATE table
//	--describe --group g|--all-groups        default view --offsets (GROUP TOPIC PARTITION
//	           [--offsets|--members|--state]  LEADER-EPOCH START-OFFSET LAG) [--verbose]
//	--delete --group g...|--all-groups       DeleteGroups (groups must be empty)
//	--delete-offsets --group g --topic t...  DeleteShareGroupOffsets (the group must be empty)
//	--reset-offsets --group g|--all-groups --topic t[:p,...]|--all-topics
//	           --to-earliest|--to-latest|--to-current|--to-offset n|--shift-by n|
//	           --to-datetime ts|--by-duration PnDTnHnMnS  --dry-run|--execute [--export]
//
// Common options: --bootstrap-server (required), --command-config (client properties),
// --timeout (ms, default 30000), --verbose, --output text|json (a muster extension: one JSON
// document on stdout).
//
// A share group's "offset" is its share-partition start offset (SPSO): the first record not yet
// acknowledged or archived. --reset-offsets moves it (the group must be empty); --to-current
// keeps it and --shift-by moves it from where it is. Exit codes: 0 on success, 1 on a usage
// error or any failure.
package sharegroups
