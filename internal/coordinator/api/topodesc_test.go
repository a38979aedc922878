package api

import (
	"fmt"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/streams/topodesc"
)

func newTestTD(initial, max, inflight time.Duration) *TopologyDescriptions {
	return NewTopologyDescriptions(topodesc.NewMemory(0), initial, max, inflight, nil)
}

func TestTopologyDescriptionShouldSolicitConditions(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	base := coordinator.TopologyDescriptionState{Valid: true, Current: 3, Stored: -1, LastFailed: -1, Now: now}
	for name, tc := range map[string]struct {
		mod  func(*coordinator.TopologyDescriptionState)
		want bool
	}{
		"solicit":          {func(*coordinator.TopologyDescriptionState) {}, true},
		"invalid":          {func(s *coordinator.TopologyDescriptionState) { s.Valid = false }, false},
		"stale":            {func(s *coordinator.TopologyDescriptionState) { s.Stale = true }, false},
		"no topology":      {func(s *coordinator.TopologyDescriptionState) { s.Current = -1 }, false},
		"stored current":   {func(s *coordinator.TopologyDescriptionState) { s.Stored = 3 }, false},
		"stored older":     {func(s *coordinator.TopologyDescriptionState) { s.Stored = 2 }, true},
		"failed current":   {func(s *coordinator.TopologyDescriptionState) { s.LastFailed = 3 }, false},
		"failed older":     {func(s *coordinator.TopologyDescriptionState) { s.LastFailed = 2 }, true},
		"stored and older": {func(s *coordinator.TopologyDescriptionState) { s.Stored, s.LastFailed = 2, 2 }, true},
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
	s := func(at time.Duration, epoch int32) coordinator.TopologyDescriptionState {
		return coordinator.TopologyDescriptionState{Valid: true, Current: epoch, Stored: -1, LastFailed: -1, Now: now.Add(at)}
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
		td.ShouldSolicit(groups[i%len(groups)], coordinator.TopologyDescriptionState{Valid: true, Current: 1, Stored: -1, LastFailed: -1,
			Now: now.Add(time.Duration(i) * time.Millisecond)})
	}
}
