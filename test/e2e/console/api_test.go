package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/broker"
	"github.com/muster-io/muster/internal/cli/consumergroups"
	"github.com/muster-io/muster/internal/cli/streamsgroups"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/console"
)

// inProcess starts a broker in this process with the admin tools wired as cmd/muster wires them
// (the console's actions run them against the broker's listener).
func inProcess(t *testing.T, overrides ...string) *broker.Broker {
	t.Helper()
	vals, err := config.Parse(nil, append([]string{"group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=4"}, overrides...))
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(broker.Options{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", DataDir: t.TempDir(), Config: vals,
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Tools: console.Tools{ConsumerGroups: consumergroups.NewCommand, StreamsGroups: streamsgroups.NewCommand}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return b
}

func apiErr(body string) string {
	var e struct{ Error string }
	json.Unmarshal([]byte(body), &e)
	return e.Error
}

// TestConsoleBadInput: the API answers malformed parameters with 400 and a message naming what
// is wrong, an unknown group or topic with 404, and a method other than POST on an action with
// 405 — and then nothing changed.
func TestConsoleBadInput(t *testing.T) {
	b := inProcess(t)
	base := "http://" + b.HTTPAddr()
	cl := client(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctxT(t, 10*time.Second), 2, 1, nil, "bi"); err != nil {
		t.Fatal(err)
	}
	commit(t, cl, "bad-input", map[string]map[int32]int64{"bi": {0: 0, 1: 0}})
	long := strings.Repeat("g", 1025)
	for _, c := range []struct {
		method, path, ctype, body string
		status                    int
		msg                       string
	}{
		{"GET", "/api/v1/groups?page=0", "", "", 400, `parameter "page": 0 is out of range`},
		{"GET", "/api/v1/groups?page=abc", "", "", 400, `"abc" is not an integer`},
		{"GET", "/api/v1/groups?size=5000", "", "", 400, `parameter "size": 5000 is out of range [1, 1000]`},
		{"GET", "/api/v1/groups?type=kafka", "", "", 400, `parameter "type": "kafka" is not one of classic, consumer, streams, share`},
		{"GET", "/api/v1/groups?state=Happy", "", "", 400, `"Happy" is not one of`},
		{"GET", "/api/v1/groups?colour=blue", "", "", 400, `unknown parameter "colour"`},
		{"GET", "/api/v1/groups?page=1&page=2", "", "", 400, `parameter "page" given 2 times`},
		{"GET", "/api/v1/groups?%zz", "", "", 400, "malformed query string"},
		{"GET", "/api/v1/groups/" + long, "", "", 400, "longer than 1024 bytes"},
		{"GET", "/api/v1/groups/bad-input/offsets?size=-1", "", "", 400, "out of range"},
		{"GET", "/api/v1/topics?internal=maybe", "", "", 400, `"maybe" is not a boolean`},
		{"GET", "/api/v1/events?group=a&topic=b", "", "", 400, "not both"},
		{"GET", "/api/v1/groups/no-such-group", "", "", 404, "not found"},
		{"GET", "/api/v1/topics/no-such-topic", "", "", 404, "not found"},
		{"GET", "/api/v1/nothing", "", "", 404, "no API endpoint"},
		{"POST", "/api/v1/groups", "application/json", "{}", 405, "use GET"},
		// Actions: POST with a JSON body only, every field checked before anything happens.
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "text/plain", `{"scenario":"to-earliest","all_topics":true}`, 400, "JSON body"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/x-www-form-urlencoded", "scenario=to-earliest", 400, "JSON body"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":`, 400, "malformed JSON body"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-earliest","all_topics":true,"force":1}`, 400, `unknown field "force"`},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-moon","all_topics":true}`, 400, `scenario "to-moon" is not one of`},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-offset","all_topics":true}`, 400, "needs a value"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-earliest"}`, 400, "give topics or all_topics"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-earliest","topics":["-x"]}`, 400, "may not start with '-'"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-datetime","value":"yesterday","all_topics":true}`, 400, "yesterday"},
		{"POST", "/api/v1/groups/bad-input/offsets/reset?execute=true", "application/json", `{"scenario":"to-earliest","all_topics":true}`, 400, "unknown parameter"},
		{"POST", "/api/v1/groups/bad-input/offsets/delete", "application/json", `{}`, 400, "give the topics"},
		{"POST", "/api/v1/groups/no-such-group/delete", "application/json", `{"execute":true}`, 404, "not found"},
		{"POST", "/api/v1/groups/bad-input/members/nobody/remove", "application/json", `{"execute":true}`, 404, "member nobody"},
		// No action on any other method.
		{"GET", "/api/v1/groups/bad-input/offsets/reset", "", "", 405, "use POST"},
		{"GET", "/api/v1/groups/bad-input/delete", "", "", 405, "use POST"},
		{"DELETE", "/api/v1/groups/bad-input", "", "", 405, "use GET"},
		{"PUT", "/api/v1/groups/bad-input/offsets/delete", "application/json", `{"topics":["bi"],"execute":true}`, 405, "use POST"},
		{"GET", "/api/v1/groups/bad-input/members/m/remove", "", "", 405, "use POST"},
	} {
		status, body := do(t, c.method, base+c.path, c.ctype, c.body)
		if status != c.status || !strings.Contains(apiErr(body), c.msg) {
			t.Errorf("%s %s %s: %d %s, want %d with %q", c.method, c.path[:min(len(c.path), 80)], c.body, status, body, c.status, c.msg)
		}
	}
	// The pages answer bad parameters with 400 too, in HTML.
	for path, msg := range map[string]string{"/ui/groups?page=x": "not an integer", "/ui/groups/bad-input?mpage=0": "out of range",
		"/ui/nowhere": "no page", "/ui/groups/no-such-group": "not found"} {
		status, body := get(t, base+path)
		if (status != 400 && status != 404) || !strings.Contains(body, msg) || !strings.Contains(body, "<html") {
			t.Errorf("GET %s: %d, want 400/404 HTML with %q", path, status, msg)
		}
	}
	if status, _ := do(t, "POST", base+"/ui/groups/bad-input", "application/x-www-form-urlencoded", "x=1"); status != 405 {
		t.Errorf("POST on a page: %d, want 405", status)
	}
	// Nothing changed: the group and its offsets are as committed.
	offs := fetchOffsets(t, adm, "bad-input")
	if len(offs) != 2 || offs[0] != 0 || offs[1] != 0 {
		t.Errorf("offsets after the bad requests: %v", offs)
	}
	// A dry run (the default) changes nothing either; a reset of an inactive group through the
	// API, with execute, does.
	status, body := do(t, "POST", base+"/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-offset","value":"7","topics":["bi:1"]}`)
	if status != 200 || !strings.Contains(body, `"dry_run": true`) || !strings.Contains(body, "--dry-run") {
		t.Fatalf("dry run: %d %s", status, body)
	}
	if offs := fetchOffsets(t, adm, "bad-input"); offs[1] != 0 {
		t.Fatalf("the dry run moved partition 1 to %d", offs[1])
	}
	produce(t, client(t, b.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner())), "bi", 2, 10)
	status, body = do(t, "POST", base+"/api/v1/groups/bad-input/offsets/reset", "application/json", `{"scenario":"to-offset","value":"7","topics":["bi:1"],"execute":true}`)
	if status != 200 || !strings.Contains(body, `"current_offset": 0`) || !strings.Contains(body, `"new_offset": 7`) {
		t.Fatalf("execute: %d %s", status, body)
	}
	if offs := fetchOffsets(t, adm, "bad-input"); offs[1] != 7 || offs[0] != 0 {
		t.Fatalf("after the reset: %v", offs)
	}
	// An action the broker refuses (a reset of an active group) answers 409 with the tool's message.
	m := consumer848(t, b.Addr(), "busy-group", "bi", "busy")
	_ = m
	eventually(t, 20*time.Second, "busy-group is Stable", func() bool {
		var g apiGroup
		return tryJSON(base+"/api/v1/groups/busy-group", &g) && g.State == "Stable"
	})
	status, body = do(t, "POST", base+"/api/v1/groups/busy-group/offsets/reset", "application/json", `{"scenario":"to-earliest","all_topics":true,"execute":true}`)
	if status != 409 || !strings.Contains(apiErr(body), "inactive") {
		t.Errorf("reset of an active group: %d %s", status, body)
	}
	// Removing a member: a dry run first, then LeaveGroup through the broker's listener; the
	// rebalance history records the removal and its reason.
	var g apiGroup
	getJSON(t, base+"/api/v1/groups/busy-group", &g)
	mid := g.Members[0].MemberID
	status, body = do(t, "POST", base+"/api/v1/groups/busy-group/members/"+url.PathEscape(mid)+"/remove", "application/json", `{}`)
	if status != 200 || !strings.Contains(body, `"dry_run": true`) {
		t.Fatalf("remove member, dry run: %d %s", status, body)
	}
	status, body = do(t, "POST", base+"/api/v1/groups/busy-group/members/"+url.PathEscape(mid)+"/remove", "application/json", `{"execute":true,"reason":"test"}`)
	if status != 200 {
		t.Fatalf("remove member: %d %s", status, body)
	}
	eventually(t, 10*time.Second, "the removal in the history", func() bool {
		var h struct {
			Events []struct {
				Causes []struct{ Cause, Member, Reason string } `json:"causes"`
			} `json:"events"`
		}
		tryJSON(base+"/api/v1/groups/busy-group/history", &h)
		for _, e := range h.Events {
			for _, c := range e.Causes {
				if c.Member == mid && c.Cause == "MEMBER_LEFT" && strings.Contains(c.Reason, "test") {
					return true
				}
			}
		}
		return false
	})
}

// TestConsoleLargeGroupsPaginated: a consumer group of 10,000 members and a group with 100,000
// committed partitions: every page and API answer holds one page of rows (100 by default, 1000
// at most), the pager knows the totals, and the work per page is bounded by its rows (the time
// is logged, never asserted).
func TestConsoleLargeGroupsPaginated(t *testing.T) {
	if testing.Short() {
		t.Skip("large groups take a while")
	}
	b := inProcess(t, "group.consumer.max.size=20000", "muster.lag.sample.interval.ms=60000")
	base := "http://" + b.HTTPAddr()
	cl := client(t, b.Addr())
	adm := kadm.NewClient(cl)
	ctx := ctxT(t, 5*time.Minute)
	if _, err := adm.CreateTopic(ctx, 8, 1, nil, "big-topic"); err != nil {
		t.Fatal(err)
	}

	// 10,000 KIP-848 members join (raw heartbeats, 8 connections).
	const members = 10_000
	start := time.Now()
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			c, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := w; i < members; i += 8 {
				req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
				req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "big", fmt.Sprintf("member-%05d", i), 0
				req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 60000, []string{"big-topic"}
				req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
				resp, err := req.RequestWith(ctx, c)
				if err == nil && resp.ErrorCode != 0 {
					err = fmt.Errorf("member %d: error %d", i, resp.ErrorCode)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < 8; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d members joined in %v", members, time.Since(start))

	// 100 topics of 1,000 partitions, every partition committed by one group.
	start = time.Now()
	req := kmsg.NewPtrCreateTopicsRequest()
	for i := 0; i < 100; i++ {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = fmt.Sprintf("wide-%03d", i), 1000, 1
		req.Topics = append(req.Topics, rt)
	}
	if _, err := req.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		offs := map[int32]int64{}
		for p := int32(0); p < 1000; p++ {
			offs[p] = 0
		}
		commit(t, cl, "wide", map[string]map[int32]int64{fmt.Sprintf("wide-%03d", i): offs})
	}
	t.Logf("100,000 partitions created and committed in %v", time.Since(start))

	timed := func(what, url string) (int, string) {
		t0 := time.Now()
		status, body := get(t, url)
		t.Logf("%s: %v, %d bytes", what, time.Since(t0), len(body))
		return status, body
	}
	// Pages.
	status, body := timed("group page of 10,000 members", base+"/ui/groups/big")
	if status != 200 || strings.Count(body, `<tr data-member="`) != 100 || !strings.Contains(body, "page 1 of 100 (10000)") {
		t.Errorf("big group page: %d, %d member rows: %.300s", status, strings.Count(body, `<tr data-member="`), body)
	}
	status, body = timed("its last page", base+"/ui/groups/big?mpage=100")
	if status != 200 || strings.Count(body, `<tr data-member="`) != 100 || !strings.Contains(body, "member-09999") {
		t.Errorf("last member page: %d", status)
	}
	status, body = timed("group page of 100,000 partitions", base+"/ui/groups/wide")
	if status != 200 || strings.Count(body, `<tr data-tp="`) != 100 || !strings.Contains(body, "page 1 of 1000 (100000)") {
		t.Errorf("wide group page: %d, %d offset rows", status, strings.Count(body, `<tr data-tp="`))
	}
	status, body = timed("a middle page", base+"/ui/groups/wide?opage=500")
	if status != 200 || strings.Count(body, `<tr data-tp="`) != 100 || !strings.Contains(body, `data-tp="wide-049/900"`) {
		t.Errorf("middle offsets page: %d", status)
	}
	// API.
	var g apiGroup
	getJSON(t, base+"/api/v1/groups/big?size=1000&page=10", &g)
	if len(g.Members) != 1000 || g.Paging.Total != members || g.Members[0].MemberID != "member-09000" {
		t.Errorf("API members page: %d members, total %d", len(g.Members), g.Paging.Total)
	}
	var o struct {
		Paging     struct{ Total int } `json:"paging"`
		Partitions []struct {
			Topic string `json:"topic"`
		} `json:"partitions"`
	}
	getJSON(t, base+"/api/v1/groups/wide/offsets?size=1000&page=100", &o)
	if len(o.Partitions) != 1000 || o.Paging.Total != 100_000 || o.Partitions[0].Topic != "wide-099" {
		t.Errorf("API offsets page: %d rows, total %d", len(o.Partitions), o.Paging.Total)
	}
	status, body = timed("the group list", base+"/ui/groups")
	if status != 200 || !strings.Contains(body, `data-group="big"`) {
		t.Errorf("group list: %d", status)
	}
}
