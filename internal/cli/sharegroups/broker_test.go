package sharegroups

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/testutil"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 10, 0, time.UTC)

func runCmd(args ...string) clikittest.Result {
	return clikittest.Run(newCommand(env{Now: func() time.Time { return testNow }, Loc: time.UTC}), args...)
}

var lines = clikittest.Lines

// fixture: a broker with topic "jobs" (2 partitions, 10 and 4 records) and a share group "work"
// whose member "member-1" acknowledged jobs:0 offsets 0–5.
type fixture struct {
	t    *testing.T
	addr string
	adm  *kadm.Client
	m    *testutil.ShareMember
}

func (f *fixture) run(args ...string) clikittest.Result {
	return runCmd(append([]string{"--bootstrap-server", f.addr}, args...)...)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	b := testutil.Start(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	f := &fixture{t: t, addr: b.Addr(), adm: kadm.NewClient(cl)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := f.adm.CreateTopic(ctx, 2, 1, nil, "jobs"); err != nil {
		t.Fatal(err)
	}
	for p, n := range map[int32]int{0: 10, 1: 4} {
		for i := 0; i < n; i++ {
			r := &kgo.Record{Topic: "jobs", Partition: p, Value: []byte("j"), Timestamp: testNow.Add(time.Duration(i-20) * time.Second)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "work"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kadm.StringPtr("earliest")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	if _, err := req.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	tds, err := f.adm.ListTopics(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte(tds["jobs"].ID)
	f.m, err = testutil.NewShareMember(b.Addr(), "work", "member-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.m.Conn.Close() })
	if _, err := f.m.Join("jobs"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Fetch(f.m.FetchRequest(id, []int32{0, 1}, 100, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Acknowledge(f.m.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 5, Types: []int8{coordinator.AckAccept}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestShareGroupsCommand(t *testing.T) {
	f := newFixture(t)

	f.run("--list").Expect(t, 0, "work\n", "")
	f.run("--list", "--state").Expect(t, 0, lines("GROUP           STATE", "work            Stable"), "")
	f.run("--list", "--state", "Empty").Expect(t, 0, "GROUP           STATE\n", "")
	f.run("--list", "--output", "json").Expect(t, 0, lines("[", `  {`, `    "group": "work",`, `    "state": "Stable"`, "  }", "]"), "")

	f.run("--describe", "--group", "work").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       LEADER-EPOCH    START-OFFSET    LAG",
		"work            jobs            0               0               6               4",
		"work            jobs            1               0               0               4"), "")
	r := f.run("--describe", "--group", "work", "--members", "--verbose")
	if r.Code != 0 || !strings.Contains(r.Stdout, "CONSUMER-ID") || !strings.Contains(r.Stdout, "member-1") ||
		!strings.Contains(r.Stdout, "jobs:0,1") {
		t.Errorf("--members (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = f.run("--describe", "--group", "work", "--state", "--verbose")
	if r.Code != 0 || !strings.Contains(r.Stdout, "simple") || !strings.Contains(r.Stdout, "Stable") || !strings.Contains(r.Stdout, "GROUP-EPOCH") {
		t.Errorf("--state (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = f.run("--describe", "--group", "work", "--output", "json")
	var docs []describedJSON
	if err := json.Unmarshal([]byte(r.Stdout), &docs); err != nil || len(docs) != 1 || !docs[0].Exists || len(docs[0].Offsets) != 2 ||
		*docs[0].Offsets[0].StartOffset != 6 || len(docs[0].Members) != 1 {
		t.Errorf("--describe --output json (%v):\n%s", err, r.Stdout)
	}
	f.run("--describe", "--group", "nope").Expect(t, 1, "", "Error: Share group 'nope' does not exist.\n")

	// A group with members refuses resets and deletions.
	f.run("--reset-offsets", "--group", "work", "--all-topics", "--to-earliest", "--dry-run").Expect(t, 1, "",
		"Error: Share group 'work' is not empty: its offsets can only be reset when it has no members, but the current state is Stable.\n")
	r = f.run("--delete", "--group", "work")
	if r.Code != 1 || !strings.Contains(r.Stderr, "NON_EMPTY_GROUP") {
		t.Errorf("delete of a live group (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	if err := f.m.Leave(); err != nil {
		t.Fatal(err)
	}
	f.run("--reset-offsets", "--group", "work", "--topic", "jobs", "--shift-by", "-2", "--dry-run").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       NEW-OFFSET",
		"work            jobs            0               4",
		"work            jobs            1               0"), "")
	f.run("--reset-offsets", "--group", "work", "--all-topics", "--to-latest", "--execute", "--export").Expect(t, 0, lines("jobs,0,10", "jobs,1,4"), "")
	f.run("--describe", "--group", "work").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       LEADER-EPOCH    START-OFFSET    LAG",
		"work            jobs            0               0               10              0",
		"work            jobs            1               0               4               0"), "")
	f.run("--reset-offsets", "--group", "work", "--topic", "jobs:1", "--by-duration", "PT18S", "--execute").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       NEW-OFFSET",
		"work            jobs            1               2"), "")
	f.run("--delete-offsets", "--group", "work", "--topic", "jobs").Expect(t, 0, lines(
		"Request succeeded for deleting offsets from group work.",
		"TOPIC           STATUS",
		"jobs            Successful"), "")
	f.run("--describe", "--group", "work").Expect(t, 0, "Share group 'work' has no offset information.\n", "")
	f.run("--delete", "--group", "work").Expect(t, 0, "Deletion of requested share groups ('work') was successful.\n", "")
	f.run("--list").Expect(t, 0, "", "")
}

func TestShareGroupsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--list", "--describe"}, "Command must include exactly one action"},
		{[]string{"--describe"}, "[group]"},
		{[]string{"--reset-offsets", "--group", "g", "--all-topics", "--to-earliest"}, "[dry-run], [execute]"},
		{[]string{"--delete-offsets", "--group", "g"}, "[topic]"},
		{[]string{"--list", "--output", "yaml"}, "Invalid output format"},
	} {
		r := runCmd(append([]string{"--bootstrap-server", "127.0.0.1:1"}, c.args...)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, c.err) {
			t.Errorf("%v: code %d, stderr %q; want %q", c.args, r.Code, r.Stderr, c.err)
		}
	}
}
