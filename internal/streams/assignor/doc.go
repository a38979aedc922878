// Package assignor computes target assignments for KIP-1071 streams groups.
//
// It provides the "sticky" task assignor, the counterpart of Kafka's
// org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor
// (the only built-in streams assignor). The package is pure: it takes a
// GroupSpec (members with their current target assignment, the configured
// topology and the assignment configs) and returns a new target Assignment.
// It does no I/O, reads no clock and produces the same output for the same
// input regardless of the order of GroupSpec.Members, of TaskLags entries or
// of map iteration.
//
// # Algorithm
//
// Members are indexed in MemberID order and processes in ProcessID order;
// tasks are indexed subtopology by subtopology (subtopologies in ID order),
// partition by partition. All later steps work on these integer indexes, so
// the cost is O(tasks + members + reported lags), plus sorting members and
// heap operations on members of one process and, for processes of unequal
// sizes (or fewer than 128 processes in the standby step), on processes
// (log factors). When all processes have the same number of members, the
// least-loaded process for the remaining active tasks comes from a bucket
// queue in O(1), and for standbys from bitsets per load. The working
// arrays are pooled across calls; the output is a few flat arrays (no map
// per member; Assignment.Map gives the map form).
//
//  1. Stateful active tasks, then stateless active tasks, are each balanced on
//     their own, as Kafka does. Every member ends with floor or ceil of its
//     share (stateful tasks per member, then active tasks per member), so
//     processes are balanced by capacity (their number of members).
//     Placement order for a task: its previous active owner while it is under
//     quota; else the least-loaded member of that owner's process; else the
//     best-ranked previous holder of its state (standby or warm-up holders
//     first, then members reporting a lag for it, lowest lag first), or the
//     least-loaded member of that holder's process; else the least-loaded
//     process (tasks per member) and its least-loaded member.
//  2. Warm-ups (see below).
//  3. Standby tasks: NumStandbyReplicas per stateful task, never on the
//     process of the active task, of a warm-up of the task, or of another
//     standby of the task. Order: the previous active owner, then previous
//     standby/warm-up holders and lag reporters (each falling back to the
//     least-loaded member of its process), each while under the quota on
//     active plus standby tasks per member; the rest go to the least-loaded
//     process not yet holding the task. When too few processes exist the
//     task simply gets fewer standbys (Kafka logs a warning in that case).
//
// # Warm-up tasks
//
// Kafka's 4.x streams sticky assignor returns only active and standby tasks
// (warm-ups are left to reconciliation there). This package implements the
// rule of Kafka's classic HighAvailabilityTaskAssignor instead: after the
// active tasks are balanced, a stateful task whose active owner changed from
// a previous owner P (still in the group) to a member N on another process
// stays active on the caught-up P, and N gets it as a warm-up task, when N
// is not caught up: N reports lags (TaskLags non-nil) and its lag for the
// task is missing or above AcceptableRecoveryLag. At most NumWarmupReplicas
// warm-ups exist in the group; warm-ups N already had in its previous
// target come first, then tasks in task order. While a warm-up lasts, P
// holds one active task more (and N one less) than balance asks for. Members that report no lags
// at all (TaskLags nil) never get warm-ups: the move happens at once. A
// warm-up that has caught up is promoted by the next assignment because N
// is then within AcceptableRecoveryLag and the move goes through.
//
// Not implemented: rack-aware standby placement by client tags
// (rack.aware.assignment.tags); RackID, ClientTags and InstanceID are
// accepted and ignored.
package assignor
