package member_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/streams/topology"
	"github.com/muster-io/muster/streams/member"
)

// TestShutdownApplication: one member asks the group to shut down; every
// member sees SHUTDOWN_APPLICATION and its OnShutdownRequested runs once.
func TestShutdownApplication(t *testing.T) {
	e := newEnv(t)
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	var calls [2]atomic.Int32
	ms := make([]*member.Member, 2)
	for i := range ms {
		ms[i] = e.start("down", "m", nil, func(c *member.Config) {
			c.OnShutdownRequested = func() { calls[i].Add(1) }
		})
	}
	eventually(t, "both members have tasks", func() bool { return partition(allTasks(), ms...) })
	ms[0].RequestShutdown()
	for i, m := range ms {
		eventually(t, "SHUTDOWN_APPLICATION", func() bool { return m.HasStatus(member.StatusShutdownApplication) && calls[i].Load() > 0 })
	}
	time.Sleep(200 * time.Millisecond) // several more heartbeats
	for i := range ms {
		if n := calls[i].Load(); n != 1 {
			t.Errorf("member %d: OnShutdownRequested called %d times, want 1", i, n)
		}
	}
}

// TestTopologyEpochs: a member joining with an older topology epoch than
// the group's is fenced (STREAMS_TOPOLOGY_FENCED, fatal: the loop stops
// and Err reports it); an existing member behind a newer group topology
// sees STALE_TOPOLOGY.
func TestTopologyEpochs(t *testing.T) {
	e := newEnv(t)
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	old := e.start("epochs", "old", nil, nil)
	eventually(t, "old member has tasks", func() bool { return old.Assignment().Active.Len() == 10 })
	upgraded := e.start("epochs", "new", nil, func(c *member.Config) { c.Topology.Epoch = 1 })
	eventually(t, "old member sees STALE_TOPOLOGY", func() bool { return old.HasStatus(member.StatusStaleTopology) })
	if err := upgraded.Err(); err != nil {
		t.Fatalf("upgraded member: %v", err)
	}

	late := e.start("epochs", "late", nil, nil) // epoch 0 < group epoch 1
	select {
	case <-late.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("member with an outdated topology was not fenced")
	}
	if err := late.Err(); !errors.Is(err, kerr.StreamsTopologyFenced) {
		t.Fatalf("late member error %v, want STREAMS_TOPOLOGY_FENCED", err)
	}
	if !late.Assignment().Empty() {
		t.Fatalf("fenced member owns %v", late.Assignment())
	}
}

// supportsKey reports whether the broker advertises an API key.
func supportsKey(t *testing.T, e *env, key int16) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	vs, err := e.adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ok := false
	vs.Each(func(v kadm.BrokerApiVersions) {
		if _, has := v.KeyMaxVersion(key); has {
			ok = true
		}
	})
	return ok
}

// TestTopologyDescriptionPush (KIP-1331): with a plugin configured the
// broker solicits the description; the member pushes it once and clears
// its flag; a member with PushEnabled=false never pushes.
func TestTopologyDescriptionPush(t *testing.T) {
	b := newEnvWith(t, "group.streams.topology.description.plugin.class=memory")
	if !supportsKey(t, b, 93) {
		t.Fatal("the broker does not advertise KIP-1331 StreamsGroupTopologyDescriptionUpdate (key 93)")
	}
	b.createTopic("words", 6)
	b.createTopic("counts", 4)
	desc, err := topology.NewBuilder().
		Subtopology("0").Source("src-words", []string{"words"}).Done().
		Subtopology("1").Source("src-counts", []string{"counts"}).Done().
		Build()
	if err != nil {
		t.Fatal(err)
	}
	// Separate groups: the broker solicits one member per group and
	// back-off window.
	pusher := b.start("push", "pusher", nil, func(c *member.Config) { c.TopologyDescription = desc })
	eventually(t, "description pushed", func() bool { return pusher.Stats().TopologyPushes > 0 })
	eventually(t, "flag cleared after the push", func() bool { return !pusher.TopologyDescriptionRequired() })
	if s := pusher.Stats(); s.TopologyPushes != 1 || s.TopologyPushErrors != 0 {
		t.Fatalf("pusher stats %+v, want exactly one successful push", s)
	}

	off := false
	silent := b.start("quiet", "silent", nil, func(c *member.Config) { c.TopologyDescription = desc; c.PushEnabled = &off })
	eventually(t, "broker solicits the silent member", silent.TopologyDescriptionRequired)
	time.Sleep(200 * time.Millisecond)
	if s := silent.Stats(); s.TopologyPushes+s.TopologyPushErrors != 0 {
		t.Fatalf("member with PushEnabled=false pushed: %+v", s)
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTopologyDescriptionPushRejected (KIP-1331): the broker's plugin
// rejects the description permanently (larger than its 16-byte limit), so
// the push fails with STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: the member
// clears its flag, logs at WARN and does not retry on its own. Skipped
// until the broker serves key 93.
func TestTopologyDescriptionPushRejected(t *testing.T) {
	e := newEnvWith(t, "group.streams.topology.description.plugin.class=memory",
		"group.streams.topology.description.plugin.max.bytes=16")
	if !supportsKey(t, e, 93) {
		t.Fatal("the broker does not advertise KIP-1331 StreamsGroupTopologyDescriptionUpdate (key 93)")
	}
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	desc, err := topology.NewBuilder().
		Subtopology("0").Source("src-words", []string{"words"}).Done().
		Subtopology("1").Source("src-counts", []string{"counts"}).Done().
		Build()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	m := e.start("rejected", "m", nil, func(c *member.Config) {
		c.TopologyDescription = desc
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	eventually(t, "push rejected", func() bool { return m.Stats().TopologyPushErrors > 0 })
	time.Sleep(300 * time.Millisecond) // several heartbeats: no retry, no re-solicitation
	if s := m.Stats(); s.TopologyPushErrors != 1 || s.TopologyPushes != 0 {
		t.Fatalf("stats %+v, want exactly one failed push", s)
	}
	if m.TopologyDescriptionRequired() {
		t.Fatal("flag still set after a non-retriable push error")
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED") {
		t.Fatalf("no WARN for the rejected push; log:\n%s", l)
	}
	if err := m.Err(); err != nil {
		t.Fatalf("member error %v: a push failure must not end the member", err)
	}
}
