package groups

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// otDescribeFixture: four groups with committed offsets in every classic situation —
// "simple" (commits only, no protocol type), "stable" (Stable, protocol type consumer, subscribed
// to t1), "empty" (was Stable, member left) and "connect" (Stable, protocol type connect).
func otDescribeFixture(t *testing.T) (*testutil.Broker, map[string]map[string]otOffset) {
	b := testutil.Start(t)
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t1": 3, "t2": 2})
	want := map[string]map[string]otOffset{}

	otCommit(t, addr, "simple", map[string]map[int32]otOffset{
		"t1": {0: {10, 3, "m0"}, 2: {20, -1, ""}},
		"t2": {1: {5, 7, "x"}},
	})
	want["simple"] = map[string]otOffset{"t1/0": {10, 3, "m0"}, "t1/2": {20, -1, ""}, "t2/1": {5, 7, "x"}}

	st := otJoin(t, addr, "stable", "consumer", "t1")
	otCommitMember(t, addr, "stable", st.Gen, st.ID, map[string]map[int32]otOffset{"t1": {1: {7, 2, "s"}}})
	want["stable"] = map[string]otOffset{"t1/1": {7, 2, "s"}}

	em := otJoin(t, addr, "empty", "consumer", "t2")
	otCommitMember(t, addr, "empty", em.Gen, em.ID, map[string]map[int32]otOffset{"t2": {0: {1, 0, ""}, 1: {2, 0, "e"}}})
	em.leave(t, addr)
	want["empty"] = map[string]otOffset{"t2/0": {1, 0, ""}, "t2/1": {2, 0, "e"}}

	cn := otJoin(t, addr, "connect", "connect")
	otCommitMember(t, addr, "connect", cn.Gen, cn.ID, map[string]map[int32]otOffset{"t1": {0: {99, -1, "c"}}})
	want["connect"] = map[string]otOffset{"t1/0": {99, -1, "c"}}

	states := otListed(t, addr)
	for g, s := range map[string]string{"simple": "classic//Empty", "stable": "classic/consumer/Stable", "empty": "classic/consumer/Empty", "connect": "classic/connect/Stable"} {
		if states[g] != s {
			t.Fatalf("group %s is %q, want %q", g, states[g], s)
		}
	}
	return b, want
}

// TestOffsetFetchAllEveryState: committed offsets (topic, partition, offset, leader epoch,
// metadata) are readable without joining the group, for every group state, with OffsetFetch null
// topics (v2–v7 one group, v8–v9 many groups in one request).
func TestOffsetFetchAllEveryState(t *testing.T) {
	b, want := otDescribeFixture(t)
	addr := b.Addr()
	groups := []string{"simple", "stable", "empty", "connect"}
	want["unknown"] = map[string]otOffset{} // unknown group: no topics, no error
	for v := int16(2); v <= 7; v++ {
		for _, g := range append(groups, "unknown") {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Group = g // Topics nil = all
			resp := otSend[*kmsg.OffsetFetchResponse](t, addr, v, req)
			if resp.ErrorCode != 0 {
				t.Fatalf("v%d %s: error %d", v, g, resp.ErrorCode)
			}
			got := map[string]otOffset{}
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if rp.ErrorCode != 0 {
						t.Errorf("v%d %s %s/%d: error %d", v, g, rt.Topic, rp.Partition, rp.ErrorCode)
					}
					got[fmt.Sprintf("%s/%d", rt.Topic, rp.Partition)] = otOffset{rp.Offset, rp.LeaderEpoch, *rp.Metadata}
				}
			}
			exp := otWithoutEpochBelow(want[g], v, 5)
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("v%d fetch-all %s = %v, want %v", v, g, got, exp)
			}
		}
	}
	for v := int16(8); v <= 9; v++ {
		req := kmsg.NewPtrOffsetFetchRequest()
		for _, g := range append(groups, "unknown") {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = g
			req.Groups = append(req.Groups, rg)
		}
		resp := otSend[*kmsg.OffsetFetchResponse](t, addr, v, req)
		if len(resp.Groups) != 5 {
			t.Fatalf("v%d: %d groups, want 5", v, len(resp.Groups))
		}
		for i, rg := range resp.Groups {
			if rg.Group != req.Groups[i].Group || rg.ErrorCode != 0 {
				t.Fatalf("v%d group %d: %q error %d", v, i, rg.Group, rg.ErrorCode)
			}
			if rg.Group == "unknown" {
				if len(rg.Topics) != 0 {
					t.Errorf("v%d unknown group fetch-all: %v, want no topics", v, rg.Topics)
				}
				continue
			}
			if got := otFlattenFetch(rg.Topics); !reflect.DeepEqual(got, want[rg.Group]) {
				t.Errorf("v%d fetch-all %s = %v, want %v", v, rg.Group, got, want[rg.Group])
			}
		}
	}
}

func otWithoutEpochBelow(m map[string]otOffset, v, min int16) map[string]otOffset {
	if v >= min {
		return m
	}
	out := map[string]otOffset{}
	for k, o := range m {
		o.Epoch = -1
		out[k] = o
	}
	return out
}

// TestOffsetFetchExplicitPartitions: listed partitions without a committed offset, of a known or
// an unknown group, answer offset -1, leader epoch -1, metadata "" and no error (v1–v9).
func TestOffsetFetchExplicitPartitions(t *testing.T) {
	b, want := otDescribeFixture(t)
	addr := b.Addr()
	for v := int16(1); v <= 9; v++ {
		for _, g := range []string{"simple", "unknown"} {
			var got map[string]otOffset
			if v >= 8 {
				req := kmsg.NewPtrOffsetFetchRequest()
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = g
				for _, tp := range []struct {
					topic string
					ps    []int32
				}{{"t1", []int32{0, 1}}, {"nosuch", []int32{4}}} {
					rt := kmsg.NewOffsetFetchRequestGroupTopic()
					rt.Topic, rt.Partitions = tp.topic, tp.ps
					rg.Topics = append(rg.Topics, rt)
				}
				req.Groups = append(req.Groups, rg)
				resp := otSend[*kmsg.OffsetFetchResponse](t, addr, v, req)
				if resp.Groups[0].ErrorCode != 0 {
					t.Fatalf("v%d %s: group error %d", v, g, resp.Groups[0].ErrorCode)
				}
				for _, rt := range resp.Groups[0].Topics {
					for _, rp := range rt.Partitions {
						if rp.ErrorCode != 0 {
							t.Errorf("v%d %s %s/%d: error %d", v, g, rt.Topic, rp.Partition, rp.ErrorCode)
						}
					}
				}
				got = otFlattenFetch(resp.Groups[0].Topics)
			} else {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = g
				for _, tp := range []struct {
					topic string
					ps    []int32
				}{{"t1", []int32{0, 1}}, {"nosuch", []int32{4}}} {
					rt := kmsg.NewOffsetFetchRequestTopic()
					rt.Topic, rt.Partitions = tp.topic, tp.ps
					req.Topics = append(req.Topics, rt)
				}
				resp := otSend[*kmsg.OffsetFetchResponse](t, addr, v, req)
				if resp.ErrorCode != 0 {
					t.Fatalf("v%d %s: error %d", v, g, resp.ErrorCode)
				}
				got = map[string]otOffset{}
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if rp.ErrorCode != 0 {
							t.Errorf("v%d %s %s/%d: error %d", v, g, rt.Topic, rp.Partition, rp.ErrorCode)
						}
						got[fmt.Sprintf("%s/%d", rt.Topic, rp.Partition)] = otOffset{rp.Offset, rp.LeaderEpoch, *rp.Metadata}
					}
				}
			}
			none := otOffset{-1, -1, ""}
			exp := map[string]otOffset{"t1/0": none, "t1/1": none, "nosuch/4": none}
			if g == "simple" {
				exp["t1/0"] = want["simple"]["t1/0"]
				if v < 5 {
					exp["t1/0"] = otOffset{10, -1, "m0"}
				}
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("v%d %s explicit = %v, want %v", v, g, got, exp)
			}
		}
	}
}

// TestOffsetFetchSurvivesRestart: the offsets of an Empty group are read back after a restart
// (they are durable records, not member state), and every group keeps its state.
func TestOffsetFetchSurvivesRestart(t *testing.T) {
	b, want := otDescribeFixture(t)
	states := otListed(t, b.Addr())
	b = b.Restart()
	// Offset records load before group records (their keys sort first); the groups must still
	// come back in their state (a Stable group with offsets is not turned Empty).
	if got := otListed(t, b.Addr()); !reflect.DeepEqual(got, states) {
		t.Errorf("groups after restart %v, want %v", got, states)
	}
	for _, g := range []string{"simple", "empty"} {
		if got := otFetchAll(t, b.Addr(), g); !reflect.DeepEqual(got, want[g]) {
			t.Errorf("after restart %s = %v, want %v", g, got, want[g])
		}
	}
}
