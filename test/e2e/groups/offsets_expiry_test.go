package groups

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// otSettledFetch reads a group's offsets after the shard has run every timer due at the current
// clock: the first request's loop iteration runs the due timers after the request itself, so the
// second request sees their effect.
func otSettledFetch(t *testing.T, addr, group string) map[string]otOffset {
	t.Helper()
	// A fetch of stable offsets runs on the group's shard: once it is answered, the timers the
	// clock made due ran and what they wrote is durable (and published for the plain fetch
	// that follows, which reads the shard's last durable version).
	req := kmsg.NewPtrOffsetFetchRequest()
	req.RequireStable = true
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = group
	req.Groups = append(req.Groups, g)
	otSend[*kmsg.OffsetFetchResponse](t, addr, 8, req)
	return otFetchAll(t, addr, group)
}

// TestOffsetExpiryManualClock is Kafka's offset expiry (GroupCoordinatorShard.cleanupGroupMetadata)
// with a manual clock (retention 1 s, check every 100 ms): only unsubscribed topics expire; base =
// commit time (simple group, Stable consumer group), the time the group became Empty (Empty classic
// group), or the explicit expire timestamp of OffsetCommit v2–v4 (also after a restart); Empty
// groups left without offsets are deleted; offset-expirations counts every expired offset.
func TestOffsetExpiryManualClock(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	clock := coordtest.NewManualClock(t0)
	b := testutil.StartIn(t, t.TempDir(), clock, "offsets.retention.ms=1000", "offsets.retention.check.interval.ms=100")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 2, "t2": 2})
	before := otMetrics(t, b)

	// T0: a simple group, a Stable consumer group subscribed to t1, an Empty-to-be group.
	otCommit(t, addr, "simple", map[string]map[int32]otOffset{"t1": {0: {1, -1, ""}}})
	sub := otJoin(t, addr, "sub", "consumer", "t1")
	otCommitMember(t, addr, "sub", sub.Gen, sub.ID, map[string]map[int32]otOffset{"t1": {0: {5, -1, ""}}, "t2": {0: {6, -1, ""}}})
	em := otJoin(t, addr, "em", "consumer", "t2")
	otCommitMember(t, addr, "em", em.Gen, em.ID, map[string]map[int32]otOffset{"t2": {1: {7, -1, ""}}})

	// T0+600: em becomes Empty; "ret" commits with explicit retention (v2: 5 s, v4: 3 s).
	clock.Advance(600 * time.Millisecond)
	em.leave(t, addr)
	for tp, code := range otCommitAt(t, addr, 2, "ret", -1, "", 5000, map[string]map[int32]otOffset{"t1": {0: {8, -1, ""}}}) {
		if code != 0 {
			t.Fatalf("v2 commit %s: %d", tp, code)
		}
	}
	for tp, code := range otCommitAt(t, addr, 4, "ret", -1, "", 3000, map[string]map[int32]otOffset{"t1": {1: {9, -1, ""}}}) {
		if code != 0 {
			t.Fatalf("v4 commit %s: %d", tp, code)
		}
	}

	// T0+900: nothing has expired yet.
	clock.Advance(300 * time.Millisecond)
	if got := otSettledFetch(t, addr, "simple"); len(got) != 1 {
		t.Fatalf("T0+900 simple: %v", got)
	}
	if got := otSettledFetch(t, addr, "sub"); len(got) != 2 {
		t.Fatalf("T0+900 sub: %v", got)
	}

	// T0+1000: commit-time bases reach the retention. simple's offset expires and the group
	// (Empty, no offsets left) is deleted; sub keeps its subscribed topic t1 only.
	clock.Advance(100 * time.Millisecond)
	if got := otSettledFetch(t, addr, "simple"); len(got) != 0 {
		t.Errorf("T0+1000 simple: %v, want expired", got)
	}
	if got := otSettledFetch(t, addr, "sub"); !reflect.DeepEqual(got, map[string]otOffset{"t1/0": {5, -1, ""}}) {
		t.Errorf("T0+1000 sub: %v, want only subscribed t1/0", got)
	}
	if got := otSettledFetch(t, addr, "em"); len(got) != 1 {
		t.Errorf("T0+1000 em (Empty since T0+600): %v, want kept", got)
	}
	listed := otListed(t, addr)
	if _, ok := listed["simple"]; ok {
		t.Errorf("simple group not deleted after its offsets expired")
	}
	if listed["sub"] != "classic/consumer/Stable" {
		t.Errorf("sub group: %q", listed["sub"])
	}

	// T0+1600: em's base (when it became Empty) + retention → expired, group deleted.
	clock.Advance(500 * time.Millisecond)
	if got := otSettledFetch(t, addr, "em"); len(got) != 1 {
		t.Errorf("T0+1500 em: %v, want kept", got)
	}
	clock.Advance(100 * time.Millisecond)
	if got := otSettledFetch(t, addr, "em"); len(got) != 0 {
		t.Errorf("T0+1600 em: %v, want expired", got)
	}
	if _, ok := otListed(t, addr)["em"]; ok {
		t.Errorf("em group not deleted after its offsets expired")
	}
	if got := otSettledFetch(t, addr, "ret"); len(got) != 2 {
		t.Errorf("T0+1600 ret (explicit expire timestamps): %v, want both kept", got)
	}

	// A restart keeps the explicit expire timestamps (OffsetCommitValue v1).
	b = b.Restart()
	addr = b.Addr()
	clock.Advance(1900 * time.Millisecond) // T0+3500
	if got := otSettledFetch(t, addr, "ret"); len(got) != 2 {
		t.Errorf("T0+3500 ret: %v, want both kept", got)
	}
	clock.Advance(100 * time.Millisecond) // T0+3600 = v4 commit + 3 s
	if got := otSettledFetch(t, addr, "ret"); !reflect.DeepEqual(got, map[string]otOffset{"t1/0": {8, -1, ""}}) {
		t.Errorf("T0+3600 ret: %v, want only t1/0", got)
	}
	clock.Advance(2000 * time.Millisecond) // T0+5600 = v2 commit + 5 s
	if got := otSettledFetch(t, addr, "ret"); len(got) != 0 {
		t.Errorf("T0+5600 ret: %v, want expired", got)
	}
	if _, ok := otListed(t, addr)["ret"]; ok {
		t.Errorf("ret group not deleted after its offsets expired")
	}
	if got := otSettledFetch(t, addr, "sub"); len(got) != 1 {
		t.Errorf("sub's subscribed offset expired: %v", got)
	}
	// Expired: simple t1/0, sub t2/0, em t2/1, ret t1/1 and t1/0. The counter restarted with the
	// broker, so count what the new broker saw (2) plus the first broker's 3 (checked via offset
	// count instead: only sub t1/0 is left).
	after := otMetrics(t, b)
	if got := after["muster_group_coordinator_offset_expirations_total"]; got != 2 {
		t.Errorf("offset_expirations_total on the restarted broker = %v, want 2", got)
	}
	if got := after["muster_group_coordinator_offset_count"]; got != 1 {
		t.Errorf("offset_count = %v, want 1", got)
	}
	_ = before
}

// TestOffsetExpiryNoCondition: a Stable classic group of a non-consumer protocol type has no
// expiration condition in Kafka, so none of its offsets expire, not even those committed with an
// explicit retention (OffsetCommit v2); once it is Empty they do (the group is then deleted).
func TestOffsetExpiryNoCondition(t *testing.T) {
	clock := coordtest.NewManualClock(time.UnixMilli(1_800_000_000_000))
	b := testutil.StartIn(t, t.TempDir(), clock, "offsets.retention.ms=1000", "offsets.retention.check.interval.ms=100")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 2})
	m := otJoin(t, addr, "connect", "connect")
	for tp, code := range otCommitAt(t, addr, 2, "connect", m.Gen, m.ID, 200, map[string]map[int32]otOffset{"t1": {0: {1, -1, ""}}}) {
		if code != 0 {
			t.Fatalf("commit %s: %d", tp, code)
		}
	}
	otCommitMember(t, addr, "connect", m.Gen, m.ID, map[string]map[int32]otOffset{"t1": {1: {2, -1, ""}}})
	for i := 0; i < 5; i++ {
		clock.Advance(500 * time.Millisecond)
	}
	if got := otSettledFetch(t, addr, "connect"); len(got) != 2 {
		t.Fatalf("Stable connect group lost offsets: %v", got)
	}
	m.leave(t, addr)
	clock.Advance(100 * time.Millisecond) // the v2 offset's expire timestamp has long passed
	if got := otSettledFetch(t, addr, "connect"); !reflect.DeepEqual(got, map[string]otOffset{"t1/1": {2, -1, ""}}) {
		t.Errorf("after leaving: %v, want only the offset without explicit retention", got)
	}
	for i := 0; i < 10; i++ {
		clock.Advance(100 * time.Millisecond)
	}
	if got := otSettledFetch(t, addr, "connect"); len(got) != 0 {
		t.Errorf("1 s after becoming Empty: %v, want expired", got)
	}
	if _, ok := otListed(t, addr)["connect"]; ok {
		t.Errorf("connect group not deleted")
	}
}

// TestOffsetExpiryMetricsAndWallClock: with a real clock (retention.ms a few hundred ms, checks
// every 100 ms) an Empty simple group's offsets expire and the group is deleted;
// offset-expirations and offset-count move by the number of offsets.
func TestOffsetExpiryMetricsAndWallClock(t *testing.T) {
	b := testutil.Start(t, "offsets.retention.ms=300", "offsets.retention.check.interval.ms=100")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 3})
	before := otMetrics(t, b)
	otCommit(t, addr, "gone", map[string]map[int32]otOffset{"t1": {0: {1, -1, ""}, 1: {2, -1, ""}, 2: {3, -1, ""}}})
	otEventually(t, "group gone expired and deleted", func() bool {
		_, listed := otListed(t, addr)["gone"]
		return !listed && len(otFetchAll(t, addr, "gone")) == 0
	})
	after := otMetrics(t, b)
	if d := after["muster_group_coordinator_offset_expirations_total"] - before["muster_group_coordinator_offset_expirations_total"]; d != 3 {
		t.Errorf("offset_expirations_total moved by %v, want 3", d)
	}
	if d := after["muster_group_coordinator_offset_commits_total"] - before["muster_group_coordinator_offset_commits_total"]; d != 3 {
		t.Errorf("offset_commits_total moved by %v, want 3", d)
	}
	if got := after["muster_group_coordinator_offset_count"]; got != 0 {
		t.Errorf("offset_count = %v, want 0", got)
	}
}

// TestTopicDeletionDeletesOffsets: deleting a topic tombstones every group's committed offsets
// of that topic (also after a restart), other topics' offsets stay.
func TestTopicDeletionDeletesOffsets(t *testing.T) {
	b := testutil.Start(t)
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"keep": 1, "drop": 2})
	otCommit(t, addr, "g1", map[string]map[int32]otOffset{"keep": {0: {1, -1, ""}}, "drop": {0: {2, -1, ""}, 1: {3, -1, ""}}})
	otCommit(t, addr, "g2", map[string]map[int32]otOffset{"drop": {1: {4, -1, ""}}})
	before := otMetrics(t, b)
	adm := kadm.NewClient(otClient(t, addr))
	if _, err := adm.DeleteTopic(otCtx(t), "drop"); err != nil {
		t.Fatal(err)
	}
	otEventually(t, "offsets of the deleted topic gone", func() bool {
		return len(otFetchAll(t, addr, "g1")) == 1 && len(otFetchAll(t, addr, "g2")) == 0
	})
	if got := otFetchAll(t, addr, "g1"); !reflect.DeepEqual(got, map[string]otOffset{"keep/0": {1, -1, ""}}) {
		t.Errorf("g1 = %v", got)
	}
	after := otMetrics(t, b)
	if d := after["muster_group_coordinator_offset_count"] - before["muster_group_coordinator_offset_count"]; d != -3 {
		t.Errorf("offset_count moved by %v, want -3", d)
	}
	b = b.Restart()
	if got := otFetchAll(t, b.Addr(), "g2"); len(got) != 0 {
		t.Errorf("g2 after restart = %v", got)
	}
}
