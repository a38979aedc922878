package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// fakeGroupConfigs is a GroupConfigSource in memory.
type fakeGroupConfigs struct {
	m    map[string]config.GroupConfig
	subs []func(config.GroupConfigChange)
}

func (f *fakeGroupConfigs) Get(g string) (config.GroupConfig, bool) { c, ok := f.m[g]; return c, ok }
func (f *fakeGroupConfigs) Subscribe(fn func(config.GroupConfigChange)) {
	f.subs = append(f.subs, fn)
}
func (f *fakeGroupConfigs) Groups() []string {
	var out []string
	for g := range f.m {
		out = append(out, g)
	}
	return out
}
func (f *fakeGroupConfigs) set(g string, kv map[string]string) {
	c := config.NewGroupConfig(kv)
	if c.Empty() {
		delete(f.m, g)
	} else {
		f.m[g] = c
	}
	for _, fn := range f.subs {
		fn(config.GroupConfigChange{Group: g, Config: c})
	}
}

// TestGroupConfigViewFollowsTheStore: the view starts from the store's groups, publishes a new
// snapshot per change (the same one until then, so Refresh compares a pointer), clamps an
// override to the broker's current bounds, and a shard handed the snapshot answers with it.
func TestGroupConfigViewFollowsTheStore(t *testing.T) {
	values := config.Defaults("group.consumer.max.heartbeat.interval.ms=8000")
	src := &fakeGroupConfigs{m: map[string]config.GroupConfig{
		"a": config.NewGroupConfig(map[string]string{"consumer.heartbeat.interval.ms": "6000"}),
	}}
	w := NewGroupConfigView(values, src)
	first := w.Snapshot()
	if first == nil || w.Snapshot() != first {
		t.Fatal("the snapshot must stay the same pointer until a change")
	}

	h := coordtest.New(coordtest.Config("group.consumer.max.heartbeat.interval.ms=8000"))
	h.WithTopics(nil).Add("t", 1)
	interval := func(group string) int32 {
		t.Helper()
		h.GroupConfigs = w.Snapshot()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID = 1, group, "m-"+group
		req.RebalanceTimeoutMillis, req.SubscribedTopicNames, req.Topics = 30000, []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		r := coordtest.Do(h, coordinator.ConsumerGroupHeartbeat(req))
		if r.Resp.ErrorCode != 0 {
			t.Fatalf("heartbeat %s: %d", group, r.Resp.ErrorCode)
		}
		return r.Resp.HeartbeatIntervalMillis
	}
	if got := interval("a"); got != 6000 {
		t.Fatalf("group a: interval %d, want its override 6000", got)
	}
	if got := interval("b"); got != 5000 {
		t.Fatalf("group b: interval %d, want the broker's 5000", got)
	}

	// An override above the broker's bound (set before the bound changed) is clamped.
	src.set("b", map[string]string{"consumer.heartbeat.interval.ms": "9000"})
	if w.Snapshot() == first || w.Snapshot().Version() <= first.Version() {
		t.Fatal("a change must publish a new snapshot with a higher version")
	}
	if got := interval("b"); got != 8000 {
		t.Fatalf("group b: interval %d, want 9000 clamped to 8000", got)
	}
	src.set("a", nil)
	if got := interval("a"); got != 5000 {
		t.Fatalf("group a after its overrides were removed: interval %d, want 5000", got)
	}

	st := coordinator.NewState(0, coordtest.Config(), nil, &coordtest.SeqIDs{})
	w.Refresh(st)
	if st.GroupConfigs != w.Snapshot() {
		t.Fatal("Refresh did not hand the shard the newest snapshot")
	}
}
