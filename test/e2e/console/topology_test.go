package console

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/streams/member"
)

type apiTopology struct {
	TopologyEpoch int32  `json:"topology_epoch"`
	Status        string `json:"status"`
	Epochs        []struct {
		Epoch   int32  `json:"epoch"`
		Current bool   `json:"current"`
		Text    string `json:"text"`
	} `json:"epochs"`
	Diff *struct {
		AddedNodes    []string `json:"added_nodes"`
		RemovedNodes  []string `json:"removed_nodes"`
		AddedTopics   []string `json:"added_topics"`
		RemovedTopics []string `json:"removed_topics"`
		AddedStores   []string `json:"added_stores"`
	} `json:"diff"`
}

// upgradeMember is a streams member of the "shop" application at topology epoch 1 (counts per
// word) or 2 (adds a filter and a second store with its output topic).
func upgradeMember(t *testing.T, addr, process string, epoch int32) *member.Member {
	t.Helper()
	b := member.NewTopologyBuilder().Subtopology("0")
	if epoch == 1 {
		b = b.Source("SOURCE", []string{"orders"}, "COUNT").
			Processor("COUNT", []string{"count-store"}, "SINK").
			Sink("SINK", "order-counts")
	} else {
		b = b.Source("SOURCE", []string{"orders"}, "FILTER").
			Processor("FILTER", nil, "COUNT", "SUM").
			Processor("COUNT", []string{"count-store"}, "SINK").
			Processor("SUM", []string{"sum-store"}, "SUM-SINK").
			Sink("SINK", "order-counts").
			Sink("SUM-SINK", "order-sums")
	}
	desc, err := b.Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	m, err := member.Start(member.Config{Brokers: []string{addr}, GroupID: "shop", ProcessID: process,
		Topology:            member.Topology{Epoch: epoch, Subtopologies: []member.Subtopology{{ID: "0", SourceTopics: []string{"orders"}}}},
		TopologyDescription: desc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	return m
}

// TestTopologyRollingUpgrade: during a rolling topology upgrade the broker keeps the previous
// epoch's KIP-1331 description next to the current one; the HTTP API, `muster streams-groups
// --describe --topology --all-epochs` and the console (in the browser) show both with what
// changed; once every member runs the new epoch the previous description is deleted from the
// plugin.
func TestTopologyRollingUpgrade(t *testing.T) {
	br := newBrowser(t)
	p := serve(t, "group.streams.initial.rebalance.delay.ms=0", "group.streams.min.heartbeat.interval.ms=100",
		"group.streams.heartbeat.interval.ms=100", "group.streams.topology.description.plugin.class=memory")
	adm := kadm.NewClient(client(t, p.addr))
	if _, err := adm.CreateTopic(ctxT(t, 10*time.Second), 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	all := func() apiTopology {
		var top apiTopology
		tryJSON(p.url("/api/v1/groups/shop/topology?all_epochs=true"), &top)
		return top
	}
	old := upgradeMember(t, p.addr, "p-old", 1)
	eventually(t, 30*time.Second, "epoch 1's description is stored", func() bool {
		top := all()
		return top.Status == "AVAILABLE" && len(top.Epochs) == 1 && top.Epochs[0].Epoch == 1
	})
	// The upgrade begins: a member with topology epoch 2 joins and pushes its description.
	upgradeMember(t, p.addr, "p-new", 2)
	var top apiTopology
	eventually(t, 30*time.Second, "both epochs are stored", func() bool {
		top = all()
		return len(top.Epochs) == 2 && top.TopologyEpoch == 2
	})
	if !top.Epochs[0].Current || top.Epochs[0].Epoch != 2 || top.Epochs[1].Current || top.Epochs[1].Epoch != 1 || top.Diff == nil {
		t.Fatalf("epochs: %+v", top)
	}
	if !slices.Equal(top.Diff.AddedNodes, []string{"0/FILTER", "0/SUM", "0/SUM-SINK"}) || !slices.Equal(top.Diff.AddedStores, []string{"sum-store"}) ||
		!slices.Equal(top.Diff.AddedTopics, []string{"order-sums"}) || len(top.Diff.RemovedNodes) != 0 {
		t.Errorf("diff: %+v", top.Diff)
	}
	// Without all_epochs the API gives the current epoch's (what StreamsGroupDescribe carries).
	var cur apiTopology
	getJSON(t, p.url("/api/v1/groups/shop/topology"), &cur)
	if len(cur.Epochs) != 1 || cur.Epochs[0].Epoch != 2 {
		t.Errorf("current only: %+v", cur)
	}

	out, err := muster(t, "streams-groups", "--bootstrap-server", p.addr, "--http-server", p.http, "--describe", "--topology", "--all-epochs", "--group", "shop")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"topology epoch 2 (current)", "topology epoch 1 (previous", "Processor: SUM (stores: [sum-store])",
		"# Changes from topology epoch 1 to 2", "+ nodes: 0/FILTER, 0/SUM, 0/SUM-SINK", "+ stores: sum-store", "+ topics: order-sums"} {
		if !strings.Contains(out, want) {
			t.Errorf("--all-epochs output lacks %q:\n%s", want, out)
		}
	}

	// The console draws both, the added nodes marked on the current graph.
	br.open(p.url("/ui/groups/shop"))
	if got := br.all(".topology-epoch", "data-epoch"); !slices.Equal(got, []string{"2", "1"}) {
		t.Errorf("epochs on the page: %v", got)
	}
	added := br.all(`.topology-epoch[data-epoch="2"] g.node.added`, "data-node")
	slices.Sort(added)
	if !slices.Equal(added, []string{"FILTER", "SUM", "SUM-SINK"}) {
		t.Errorf("added nodes on the page: %v", added)
	}
	if diff := br.text(`.topology-epoch[data-epoch="2"] ul.diff`); !strings.Contains(diff, "sum-store") {
		t.Errorf("diff list: %q", diff)
	}
	br.screenshot("topology-upgrade", "#topology")
	br.noConsoleErrors("rolling upgrade")

	// The last member on epoch 1 upgrades (leaves; its replacement runs epoch 2): the previous
	// description is deleted from the plugin, and the page follows live.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	old.Close(ctx)
	cancel()
	upgradeMember(t, p.addr, "p-old-upgraded", 2)
	eventually(t, 30*time.Second, "the previous epoch's description is deleted", func() bool {
		top = all()
		return len(top.Epochs) == 1 && top.Epochs[0].Epoch == 2 && top.Diff == nil
	})
	br.waitJS("the page shows one epoch", `document.querySelectorAll(".topology-epoch").length === 1`, 20*time.Second)
	br.noConsoleErrors("upgrade complete")
}
