package coordinator

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/streams/topodesc"
)

func newTestTD(initial, max, inflight time.Duration) *TopologyDescriptions {
	return NewTopologyDescriptions(topodesc.NewMemory(0), initial, max, inflight, nil)
}

func TestTopologyDescriptionShouldSolicitConditions(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	base := TopologyDescriptionState{Valid: true, Current: 3, Stored: -1, LastFailed: -1, Now: now}
	for name, tc := range map[string]struct {
		mod  func(*TopologyDescriptionState)
		want bool
	}{
		"solicit":          {func(*TopologyDescriptionState) {}, true},
		"invalid":          {func(s *TopologyDescriptionState) { s.Valid = false }, false},
		"stale":            {func(s *TopologyDescriptionState) { s.Stale = true }, false},
		"no topology":      {func(s *TopologyDescriptionState) { s.Current = -1 }, false},
		"stored current":   {func(s *TopologyDescriptionState) { s.Stored = 3 }, false},
		"stored older":     {func(s *TopologyDescriptionState) { s.Stored = 2 }, true},
		"failed current":   {func(s *TopologyDescriptionState) { s.LastFailed = 3 }, false},
		"failed older":     {func(s *TopologyDescriptionState) { s.LastFailed = 2 }, true},
		"stored and older": {func(s *TopologyDescriptionState) { s.Stored, s.LastFailed = 2, 2 }, true},
	} {
		t.Run(name, func(t *testing.T) {
			td := newTestTD(0, 0, 0)
			s := base
			tc.mod(&s)
			if got := td.ShouldSolicit("g", s); got != tc.want {
				t.Fatalf("ShouldSolicit = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTopologyDescriptionInflightAndBackoff(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	td := newTestTD(30*time.Second, 2*time.Minute, 10*time.Second)
	s := func(at time.Duration, epoch int32) TopologyDescriptionState {
		return TopologyDescriptionState{Valid: true, Current: epoch, Stored: -1, LastFailed: -1, Now: now.Add(at)}
	}
	if !td.ShouldSolicit("g", s(0, 1)) || td.ShouldSolicit("g", s(9*time.Second, 1)) {
		t.Fatal("in-flight window does not suppress a second solicitation")
	}
	if !td.ShouldSolicit("other", s(time.Second, 1)) {
		t.Fatal("in-flight window of one group suppresses another")
	}
	if !td.ShouldSolicit("g", s(10*time.Second, 1)) {
		t.Fatal("not re-solicited after the in-flight window")
	}
	// Consecutive transient failures: 30 s, 60 s, 120 s, 120 s (cap).
	at := 10 * time.Second
	for i, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 2 * time.Minute} {
		until := td.pushFailedTransiently("g", 1, now.Add(at))
		if got := until.Sub(now.Add(at)); got != want {
			t.Fatalf("failure %d: window %v, want %v", i+1, got, want)
		}
		if td.ShouldSolicit("g", s(at+want-time.Millisecond, 1)) {
			t.Fatalf("failure %d: solicited inside the window", i+1)
		}
		at += want
		if !td.ShouldSolicit("g", s(at, 1)) {
			t.Fatalf("failure %d: not solicited after the window", i+1)
		}
	}
	// A topology-epoch advance ignores (and drops) the window of the older epoch.
	td.pushFailedTransiently("g", 1, now.Add(at))
	if !td.ShouldSolicit("g", s(at, 2)) {
		t.Fatal("new topology epoch not solicited inside the old epoch's window")
	}
	if until := td.pushFailedTransiently("g", 2, now.Add(at)); until.Sub(now.Add(at)) != 30*time.Second {
		t.Fatalf("new epoch's first window %v", until.Sub(now.Add(at)))
	}
	td.pushSettled("g", 2)
	until := td.pushFailedTransiently("g", 1, now)
	if until.Sub(now) != 30*time.Second {
		t.Fatalf("back-off not reset by a success: %v", until.Sub(now))
	}
}

// Records a push outcome on the shard: success stores the epoch, a permanent failure ratchets
// LastFailedTopologyEpoch, a transient one writes nothing; both survive a reload.
func TestTopologyDescriptionPushBookkeeping(t *testing.T) {
	h := newStreamsHarness(t, newTestTopics("in", 2))
	m := newTMember("m", "p", simpleTopology(0))
	h.beat("app", m)
	td := newTestTD(0, 0, 0)
	n := len(h.log)
	if err := h.run(recordTopologyDescriptionPush(td, "app", 0, errors.New("boom"))); ErrorCode(err.(error)) != kerr.StreamsTopologyDescriptionUpdateFailed.Code {
		t.Fatalf("transient: %v", err)
	}
	if len(h.log) != n {
		t.Fatal("transient failure wrote a record")
	}
	err := h.run(recordTopologyDescriptionPush(td, "app", 0, fmt.Errorf("%w: big", topodesc.ErrTooLarge)))
	if msg := ErrorMessage(err.(error)); msg == nil || len(*msg) < 30 || (*msg)[:30] != "TOPOLOGY_DESCRIPTION_TOO_LARGE" {
		t.Fatalf("permanent message: %v", err)
	}
	if g := h.group("app"); g.LastFailedTopologyEpoch() != 0 || g.StoredTopologyEpoch() != -1 {
		t.Fatalf("after permanent: stored %d failed %d", g.StoredTopologyEpoch(), g.LastFailedTopologyEpoch())
	}
	if err := h.run(recordTopologyDescriptionPush(td, "app", 0, nil)); err != nil {
		t.Fatalf("success: %v", err)
	}
	st := replayed(t, h, keyOrder)
	g := st.Groups["app"].(*StreamsGroup)
	if g.StoredTopologyEpoch() != 0 || g.LastFailedTopologyEpoch() != 0 {
		t.Fatalf("after reload: stored %d failed %d", g.StoredTopologyEpoch(), g.LastFailedTopologyEpoch())
	}
}

// KeepOnExpiry: with a plugin configured an Empty streams group with a stored description is
// kept by the retention sweep; without a plugin it expires.
func TestTopologyDescriptionKeepOnExpiry(t *testing.T) {
	for _, plugin := range []bool{true, false} {
		var ov []string
		if plugin {
			ov = append(ov, topodesc.ConfigPluginClass+"=memory")
		}
		h := newStreamsHarness(t, newTestTopics("in", 2), ov...)
		m := newTMember("m", "p", simpleTopology(0))
		h.beat("app", m)
		h.run(recordTopologyDescriptionPush(newTestTD(0, 0, 0), "app", 0, nil))
		req := m.request("app")
		req.MemberEpoch, req.Topology = -1, nil
		h.hb(req)
		h.run(func(st *State, c *Call) { ExpireOffsets(st); st.Reply(c, nil) })
		if _, kept := h.st.Groups["app"]; kept != plugin {
			t.Fatalf("plugin=%v: kept=%v", plugin, kept)
		}
	}
}

func BenchmarkTopologyDescriptionShouldSolicit(b *testing.B) {
	td := newTestTD(0, 0, 0)
	now := time.UnixMilli(1_700_000_000_000)
	groups := make([]string, 1024)
	for i := range groups {
		groups[i] = fmt.Sprintf("group-%d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		td.ShouldSolicit(groups[i%len(groups)], TopologyDescriptionState{Valid: true, Current: 1, Stored: -1, LastFailed: -1,
			Now: now.Add(time.Duration(i) * time.Millisecond)})
	}
}
