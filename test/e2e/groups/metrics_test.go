package groups

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// TestCoordinatorMetrics scrapes /metrics before and after each step and checks that the group
// coordinator metrics (Kafka's GroupCoordinatorMetrics, group-coordinator-metrics; KIP-496) move by
// exactly the right amounts.
func TestCoordinatorMetrics(t *testing.T) {
	b := testutil.Start(t, "offset.metadata.max.bytes=8")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 4})
	const (
		commits     = "muster_group_coordinator_offset_commits_total"
		deletions   = "muster_group_coordinator_offset_deletions_total"
		expirations = "muster_group_coordinator_offset_expirations_total"
		rebalances  = "muster_group_coordinator_group_completed_rebalances_total"
		offsets     = "muster_group_coordinator_offset_count"
		classic     = `muster_group_coordinator_group_count{protocol="classic"}`
		stable      = `muster_group_coordinator_classic_group_count{state="Stable"}`
		empty       = `muster_group_coordinator_classic_group_count{state="Empty"}`
	)
	m0 := otMetrics(t, b)
	// Every series is exported from the start (zero-valued), with the runtime metrics.
	for _, name := range []string{commits, deletions, expirations, rebalances, offsets, classic, stable, empty,
		`muster_group_coordinator_group_count{protocol="consumer"}`, `muster_group_coordinator_group_count{protocol="streams"}`,
		`muster_group_coordinator_classic_group_count{state="PreparingRebalance"}`,
		`muster_group_coordinator_classic_group_count{state="CompletingRebalance"}`,
		`muster_group_coordinator_classic_group_count{state="Dead"}`,
		`muster_coordinator_shards{status="active"}`, `muster_coordinator_event_queue_depth{shard="0"}`,
		"muster_coordinator_batch_commit_errors_total", "muster_coordinator_shard_load_errors_total",
		`muster_coordinator_shard_load_seconds{shard="0"}`, `muster_coordinator_shard_load_records{shard="0"}`,
	} {
		if _, ok := m0[name]; !ok {
			t.Errorf("metric %s not exported", name)
		}
	}
	if m0[`muster_coordinator_shards{status="active"}`] != 8 {
		t.Errorf("active shards = %v, want 8", m0[`muster_coordinator_shards{status="active"}`])
	}
	delta := func(before, after map[string]float64, want map[string]float64) {
		t.Helper()
		for name, w := range want {
			if d := after[name] - before[name]; d != w {
				t.Errorf("%s moved by %v, want %v", name, d, w)
			}
		}
	}

	// A completed classic rebalance: +1 completed rebalance, one more Stable classic group.
	m := otJoin(t, addr, "g", "consumer", "t1")
	m1 := otMetrics(t, b)
	delta(m0, m1, map[string]float64{rebalances: 1, classic: 1, stable: 1, empty: 0, commits: 0})

	// Commits count every committed offset (not requests); a partition refused with
	// OFFSET_METADATA_TOO_LARGE is not counted.
	codes := otCommitAt(t, addr, 8, "g", m.Gen, m.ID, -1, map[string]map[int32]otOffset{"t1": {0: {1, -1, ""}, 1: {2, -1, "short"}, 2: {3, -1, "far too long"}}})
	if codes["t1/2"] != 12 || codes["t1/0"] != 0 || codes["t1/1"] != 0 {
		t.Fatalf("commit codes %v", codes)
	}
	otCommit(t, addr, "admin", map[string]map[int32]otOffset{"t1": {3: {4, -1, ""}}})
	otCommit(t, addr, "admin", map[string]map[int32]otOffset{"t1": {3: {5, -1, ""}}}) // overwrite
	m2 := otMetrics(t, b)
	delta(m1, m2, map[string]float64{commits: 4, offsets: 3, classic: 1, empty: 1})

	// Leaving: Stable → Empty; the Empty group's offsets are deletable: two tombstones (t1/3 has
	// no offset in g, so it answers NONE without a tombstone).
	m.leave(t, addr)
	if r := otOffsetDelete(t, addr, "g", map[string][]int32{"t1": {0, 1, 3}}); r.ErrorCode != 0 {
		t.Fatalf("offset delete: %d", r.ErrorCode)
	}
	m3 := otMetrics(t, b)
	delta(m2, m3, map[string]float64{stable: -1, empty: 1, deletions: 2, offsets: -2, expirations: 0})

	// A second rebalance of the same group counts again; DeleteGroups removes it from the gauges.
	m = otJoin(t, addr, "g", "consumer", "t1")
	m.leave(t, addr)
	m4 := otMetrics(t, b)
	delta(m3, m4, map[string]float64{rebalances: 1, classic: 0})
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"g", "admin"}
	for _, g := range otSend[*kmsg.DeleteGroupsResponse](t, addr, 2, req).Groups {
		if g.ErrorCode != 0 {
			t.Fatalf("delete %s: %d", g.Group, g.ErrorCode)
		}
	}
	m5 := otMetrics(t, b)
	// DeleteGroups tombstones are not administrative offset deletions (Kafka counts only
	// OffsetDelete in offset-deletions).
	delta(m4, m5, map[string]float64{classic: -2, empty: -2, offsets: -1, deletions: 0})
}

// TestOffsetMetadataMaxBytes: offset.metadata.max.bytes counts Java chars (UTF-16 units): at the
// limit is accepted, one more is OFFSET_METADATA_TOO_LARGE (12) for that partition only.
func TestOffsetMetadataMaxBytes(t *testing.T) {
	b := testutil.Start(t, "offset.metadata.max.bytes=4")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 4})
	codes := otCommitAt(t, addr, 8, "g", -1, "", -1, map[string]map[int32]otOffset{"t1": {
		0: {1, -1, "abcd"}, 1: {1, -1, "abcde"}, 2: {1, -1, "ab😀"}, 3: {1, -1, "abc😀"},
	}})
	if want := map[string]int16{"t1/0": 0, "t1/1": 12, "t1/2": 0, "t1/3": 12}; !reflect.DeepEqual(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
}
