package console

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/streams/member"
)

// Console API types, as the tests read them.
type apiOverview struct {
	Groups int `json:"groups"`
	Topics int `json:"topics"`
	ByType []struct {
		Type  string `json:"type"`
		Total int    `json:"total"`
	} `json:"groups_by_type"`
}

type apiGroupList struct {
	Groups []struct {
		Group, Type, State string
	} `json:"groups"`
}

type apiMember struct {
	MemberID    string `json:"member_id"`
	ClientID    string `json:"client_id"`
	MemberEpoch int32  `json:"member_epoch"`
	ProcessID   string `json:"process_id"`
	Endpoint    string `json:"endpoint"`
}

type apiGroup struct {
	Group   string      `json:"group"`
	Type    string      `json:"type"`
	State   string      `json:"state"`
	Epoch   int32       `json:"group_epoch"`
	Members []apiMember `json:"members"`
	Paging  struct {
		Total int `json:"total"`
	} `json:"members_paging"`
}

type apiOffsets struct {
	Partitions []struct {
		Topic           string `json:"topic"`
		Partition       int32  `json:"partition"`
		CommittedOffset int64  `json:"committed_offset"`
		LogEndOffset    int64  `json:"log_end_offset"`
	} `json:"partitions"`
}

type apiTopic struct {
	Partitions []struct {
		Partition     int32 `json:"partition"`
		HighWatermark int64 `json:"high_watermark"`
	} `json:"partition_stats"`
}

// consumer848 starts a franz-go KIP-848 consumer (server-side assignment) of topic in group that
// commits what it reads.
func consumer848(t *testing.T, addr, group, topic, clientID string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(clientID), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return poll(t, cl)
}

// consumerClassic starts a franz-go classic-protocol consumer.
func consumerClassic(t *testing.T, addr, group, topic, clientID string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(clientID), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return poll(t, cl)
}

func poll(t *testing.T, cl *kgo.Client) *kgo.Client {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
			cl.PollFetches(pctx)
			pcancel()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
	return cl
}

// wordcount is the streams application's topology description (KIP-1331).
func wordcount(t *testing.T) *member.TopologyDescription {
	t.Helper()
	d, err := member.NewTopologyBuilder().
		Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"words"}, "KSTREAM-FLATMAPVALUES-0000000001").
		Processor("KSTREAM-FLATMAPVALUES-0000000001", nil, "KSTREAM-AGGREGATE-0000000002").
		Processor("KSTREAM-AGGREGATE-0000000002", []string{"counts"}, "KTABLE-TOSTREAM-0000000003").
		Processor("KTABLE-TOSTREAM-0000000003", nil, "KSTREAM-SINK-0000000004").
		Sink("KSTREAM-SINK-0000000004", "word-counts").
		Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func streamsMember(t *testing.T, addr, group, process, endpoint string) *member.Member {
	t.Helper()
	m, err := member.Start(member.Config{Brokers: []string{addr}, GroupID: group, ProcessID: process, UserEndpoint: endpoint,
		Topology: member.Topology{Epoch: 1, Subtopologies: []member.Subtopology{{ID: "0", SourceTopics: []string{"words"},
			StateChangelogTopics: []member.TopicInfo{{Name: group + "-counts-changelog"}}}}},
		TopologyDescription: wordcount(t)})
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

// TestConsoleInBrowser drives the console in headless Chromium against a real `muster serve`
// with real groups: every page loads without console errors and shows what the JSON API says,
// a group page updates by itself when a member joins, and an offset reset made through the
// page's form (dry run, typed confirmation, execute) changes the committed offsets.
func TestConsoleInBrowser(t *testing.T) {
	br := newBrowser(t)
	p := serve(t, "muster.lag.sample.interval.ms=200", "muster.lag.min.distance.ms=0",
		"group.consumer.min.heartbeat.interval.ms=200", "group.consumer.heartbeat.interval.ms=200",
		"group.consumer.assignment.interval.ms=0",
		"group.streams.initial.rebalance.delay.ms=0", "group.streams.min.heartbeat.interval.ms=200", "group.streams.heartbeat.interval.ms=200",
		"group.streams.topology.description.plugin.class=memory")
	adm := kadm.NewClient(client(t, p.addr))
	ctx := ctxT(t, 3*time.Minute)
	for name, n := range map[string]int32{"orders": 4, "words": 2, "word-counts": 2} {
		if _, err := adm.CreateTopic(ctx, n, 1, nil, name); err != nil {
			t.Fatal(err)
		}
	}
	prod := client(t, p.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, prod, "orders", 4, 25)
	produce(t, prod, "words", 2, 10)

	// A consumer group (KIP-848), a classic group, an inactive group with offsets and a
	// streams group with its KIP-1331 topology description.
	consumer848(t, p.addr, "cg-live", "orders", "orders-app-1")
	consumerClassic(t, p.addr, "classic-g", "orders", "legacy-app")
	commit(t, prod, "reset-g", map[string]map[int32]int64{"orders": {0: 10, 1: 10, 2: 10, 3: 10}})
	sm := streamsMember(t, p.addr, "wordcount", "process-a", "localhost:7070")
	eventually(t, 30*time.Second, "groups settle", func() bool {
		var g, cg, cl apiGroup
		var off apiOffsets
		return tryJSON(p.url("/api/v1/groups/wordcount"), &g) && tryJSON(p.url("/api/v1/groups/cg-live"), &cg) &&
			tryJSON(p.url("/api/v1/groups/classic-g"), &cl) && tryJSON(p.url("/api/v1/groups/cg-live/offsets"), &off) &&
			g.State == "Stable" && cg.State == "Stable" && cl.State == "Stable" && len(off.Partitions) == 4 && sm.MemberEpoch() > 0
	}, func() string {
		var g, cg, cl apiGroup
		var off apiOffsets
		tryJSON(p.url("/api/v1/groups/wordcount"), &g)
		tryJSON(p.url("/api/v1/groups/cg-live"), &cg)
		tryJSON(p.url("/api/v1/groups/classic-g"), &cl)
		tryJSON(p.url("/api/v1/groups/cg-live/offsets"), &off)
		_, body := get(t, p.url("/api/v1/groups/cg-live"))
		_, ob := get(t, p.url("/api/v1/groups/cg-live/offsets"))
		return fmt.Sprintf("wordcount %s, cg-live %s, classic-g %s, %d offsets, streams member epoch %d\n%s\n%s", g.State, cg.State, cl.State, len(off.Partitions), sm.MemberEpoch(), body, ob)
	})
	eventually(t, 30*time.Second, "the topology description is stored", func() bool {
		_, body := get(t, p.url("/ui/groups/wordcount"))
		return strings.Contains(body, "KSTREAM-AGGREGATE-0000000002")
	})

	// Overview.
	var ov apiOverview
	getJSON(t, p.url("/api/v1/overview"), &ov)
	br.open(p.url("/ui"))
	if got := br.text("#group-count"); got != strconv.Itoa(ov.Groups) {
		t.Errorf("overview shows %s groups, the API %d", got, ov.Groups)
	}
	if got := br.text("#topic-count"); got != strconv.Itoa(ov.Topics) {
		t.Errorf("overview shows %s topics, the API %d", got, ov.Topics)
	}
	for _, tc := range ov.ByType {
		if got := br.text(`#groups-by-type tr[data-type="` + tc.Type + `"] td.num`); got != strconv.Itoa(tc.Total) {
			t.Errorf("overview: %s groups %s, API %d", tc.Type, got, tc.Total)
		}
	}
	if h := br.text("#health"); h != "ok" {
		t.Errorf("health %q", h)
	}
	br.screenshot("overview")
	br.noConsoleErrors("overview")

	// Group list.
	var gl apiGroupList
	getJSON(t, p.url("/api/v1/groups"), &gl)
	br.open(p.url("/ui/groups"))
	var want []string
	for _, g := range gl.Groups {
		want = append(want, g.Group)
	}
	if got := br.all("#groups tbody tr", "data-group"); !slices.Equal(got, want) {
		t.Errorf("group list shows %v, the API %v", got, want)
	}
	br.noConsoleErrors("groups")

	// A consumer group's page: members and offsets as the API gives them.
	var cg apiGroup
	getJSON(t, p.url("/api/v1/groups/cg-live"), &cg)
	br.open(p.url("/ui/groups/cg-live"))
	checkMembers(t, br, cg)
	if got := br.text("#group-epoch"); got != strconv.Itoa(int(cg.Epoch)) {
		t.Errorf("group epoch on the page %s, API %d", got, cg.Epoch)
	}
	var off apiOffsets
	getJSON(t, p.url("/api/v1/groups/cg-live/offsets"), &off)
	for _, o := range off.Partitions {
		sel := fmt.Sprintf(`#offsets tr[data-tp="%s/%d"] td.committed`, o.Topic, o.Partition)
		if got := br.text(sel); got != strconv.FormatInt(o.CommittedOffset, 10) {
			// The consumer may commit between the two reads: the page must catch up live.
			br.waitJS("offset "+sel, `(document.querySelector(`+jsString(sel)+`)||{}).textContent === "`+strconv.FormatInt(o.CommittedOffset, 10)+`"`, 10*time.Second)
		}
	}
	br.noConsoleErrors("consumer group")

	// Live: a second member joins; the open page shows it without a reload.
	eval[int](br, `window.__sameDocument = 42`)
	consumer848(t, p.addr, "cg-live", "orders", "orders-app-2")
	br.waitJS("the second member appears", `document.querySelector("#member-count").textContent.trim() === "2" && document.querySelectorAll("#members tbody tr[data-member]").length === 2`, 30*time.Second)
	if !eval[bool](br, `window.__sameDocument === 42`) {
		t.Error("the page reloaded instead of updating in place")
	}
	getJSON(t, p.url("/api/v1/groups/cg-live"), &cg)
	eventually(t, 20*time.Second, "cg-live settles with two members", func() bool {
		getJSON(t, p.url("/api/v1/groups/cg-live"), &cg)
		return cg.State == "Stable" && len(cg.Members) == 2
	})
	br.waitJS("the page shows the settled group", `document.querySelector("#group-epoch").textContent.trim() === "`+strconv.Itoa(int(cg.Epoch))+`"`, 20*time.Second)
	checkMembers(t, br, cg)
	br.screenshot("consumer-group")
	br.noConsoleErrors("consumer group, live")

	// Classic group.
	var cl apiGroup
	getJSON(t, p.url("/api/v1/groups/classic-g"), &cl)
	br.open(p.url("/ui/groups/classic-g"))
	checkMembers(t, br, cl)
	br.noConsoleErrors("classic group")

	// Streams group: members with process and IQ endpoint, the topology drawn from its KIP-1331
	// description.
	var sg apiGroup
	getJSON(t, p.url("/api/v1/groups/wordcount"), &sg)
	br.open(p.url("/ui/groups/wordcount"))
	checkMembers(t, br, sg)
	nodes := br.all(`svg.topology g.node`, "data-node")
	sort.Strings(nodes)
	wantNodes := []string{"KSTREAM-AGGREGATE-0000000002", "KSTREAM-FLATMAPVALUES-0000000001", "KSTREAM-SINK-0000000004",
		"KSTREAM-SOURCE-0000000000", "KTABLE-TOSTREAM-0000000003"}
	if !slices.Equal(nodes, wantNodes) {
		t.Errorf("topology graph nodes %v, want %v", nodes, wantNodes)
	}
	if got := br.text("#processes tbody td"); got != "process-a" {
		t.Errorf("processes table starts with %q", got)
	}
	if body := br.text("#members"); !strings.Contains(body, "localhost:7070") {
		t.Errorf("the IQ endpoint is missing from the members table: %s", body)
	}
	br.screenshot("streams-group")
	br.noConsoleErrors("streams group")

	// Topic page.
	var tp apiTopic
	getJSON(t, p.url("/api/v1/topics/orders"), &tp)
	br.open(p.url("/ui/topics/orders"))
	for _, part := range tp.Partitions {
		sel := fmt.Sprintf(`#partitions tr[data-partition="%d"] td.hw`, part.Partition)
		if got := br.text(sel); got != strconv.FormatInt(part.HighWatermark, 10) {
			t.Errorf("topic page %s = %s, API %d", sel, got, part.HighWatermark)
		}
	}
	br.noConsoleErrors("topic")

	// An offset reset through the page: preview (dry run), typed confirmation, execute.
	br.open(p.url("/ui/groups/reset-g"))
	br.do("open the reset form", chromedp.Click(chromedp.CSS("#act-reset summary")),
		chromedp.SetValue(chromedp.CSS(`#act-reset select[name=scenario]`), "to-earliest"),
		chromedp.Click(chromedp.CSS(`#act-reset button[type=submit]`)))
	br.waitJS("the dry-run plan", `!document.querySelector("#action-result table.plan").hidden && document.querySelectorAll("#action-result table.plan tbody tr").length === 4`, 20*time.Second)
	if got := br.text("#action-result .message"); !strings.Contains(got, "Dry run") {
		t.Errorf("preview message %q", got)
	}
	if got := br.text("#action-result .command"); !strings.Contains(got, "consumer-groups") || !strings.Contains(got, "--to-earliest") || !strings.Contains(got, "--dry-run") {
		t.Errorf("preview command %q", got)
	}
	// Nothing changed yet.
	offs := fetchOffsets(t, adm, "reset-g")
	for p, o := range offs {
		if o != 10 {
			t.Fatalf("the dry run changed partition %d to %d", p, o)
		}
	}
	if !eval[bool](br, `document.querySelector("#action-result form.confirm button[type=submit]").disabled`) {
		t.Error("execute is enabled before the confirmation is typed")
	}
	br.do("confirm and execute", chromedp.SendKeys(chromedp.CSS(`#action-result input[name=confirm]`), "reset-g"),
		chromedp.WaitEnabled(chromedp.CSS(`#action-result form.confirm button[type=submit]`)),
		chromedp.Click(chromedp.CSS(`#action-result form.confirm button[type=submit]`)))
	br.waitJS("the reset is done", `document.querySelector("#action-result .message").classList.contains("done")`, 30*time.Second)
	offs = fetchOffsets(t, adm, "reset-g")
	if len(offs) != 4 {
		t.Fatalf("offsets after the reset: %v", offs)
	}
	for p, o := range offs {
		if o != 0 {
			t.Errorf("partition %d at %d after the reset to earliest, want 0", p, o)
		}
	}
	br.waitJS("the page shows the new offsets", `Array.from(document.querySelectorAll("#offsets td.committed")).every(td => td.textContent.trim() === "0")`, 20*time.Second)
	br.screenshot("offset-reset")
	br.noConsoleErrors("offset reset")
}

// checkMembers compares the members table with the API's members.
func checkMembers(t *testing.T, br *browser, g apiGroup) {
	t.Helper()
	var want []string
	for _, m := range g.Members {
		want = append(want, m.MemberID)
	}
	got := br.all("#members tbody tr[data-member]", "data-member")
	if !slices.Equal(got, want) {
		t.Errorf("%s: members on the page %v, API %v", g.Group, got, want)
	}
	if c := br.text("#member-count"); c != strconv.Itoa(g.Paging.Total) {
		t.Errorf("%s: member count %s, API %d", g.Group, c, g.Paging.Total)
	}
	for _, m := range g.Members {
		row := br.text(`#members tr[data-member="` + m.MemberID + `"]`)
		if !strings.Contains(row, m.ClientID) {
			t.Errorf("%s: row of %s lacks client id %q: %s", g.Group, m.MemberID, m.ClientID, row)
		}
	}
}

func fetchOffsets(t *testing.T, adm *kadm.Client, group string) map[int32]int64 {
	t.Helper()
	resp, err := adm.FetchOffsets(ctxT(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
	return out
}
