package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	clustercli "github.com/muster-io/muster/internal/cli/cluster"
	"github.com/muster-io/muster/internal/pgtest"
)

// TestClusterStatusCommand: `muster cluster status` lists both live nodes with their
// endpoints and shards, every shard held once; after one node stops it shows as expired
// and the other holds every shard.
func TestClusterStatusCommand(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bs := startNodes(t, url, 2)
	waitBalanced(t, bs)
	run := func(args ...string) (string, clustercli.Status) {
		t.Helper()
		var out bytes.Buffer
		cmd := clustercli.NewCommand()
		cmd.SetOut(&out)
		cmd.SetArgs(append([]string{"status", "--store", url}, args...))
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		out.Reset()
		cmd = clustercli.NewCommand()
		cmd.SetOut(&out)
		cmd.SetArgs([]string{"status", "--store", url, "--json", "--shards"})
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		var st clustercli.Status
		if err := json.Unmarshal(out.Bytes(), &st); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return text, st
	}
	text, st := run()
	t.Logf("\n%s", text)
	if len(st.Nodes) != 2 || st.Nodes[0].State != "live" || st.Nodes[1].State != "live" {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	held := len(st.Nodes[0].Shards["group"]) + len(st.Nodes[1].Shards["group"])
	listed := 0
	for _, sh := range st.Shards {
		if sh.Kind == "group" {
			listed++
		}
	}
	if held != 8 || len(st.Unheld["group"]) != 0 || listed != 8 {
		t.Fatalf("group shards held %d, unheld %v, listed %d", held, st.Unheld, listed)
	}
	if len(st.Nodes[0].Shards["txn"])+len(st.Nodes[1].Shards["txn"]) == 0 {
		t.Fatal("no transaction coordinator shard is leased")
	}
	// Topic t's partitions are leases too, named by the topic.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if n := len(st.Nodes[0].Shards["partitions of t"]) + len(st.Nodes[1].Shards["partitions of t"]); n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions of t held: %+v", st.Nodes)
		}
		text, st = run()
	}
	if !strings.Contains(text, "PLAINTEXT://127.0.0.1:") || !strings.Contains(text, "group ") || !strings.Contains(text, "partitions of t ") {
		t.Fatalf("text output:\n%s", text)
	}
	bs[1].Close()
	waitBalanced(t, bs[:1])
	time.Sleep(100 * time.Millisecond)
	_, st = run()
	if st.Nodes[1].State != "stopped" || len(st.Nodes[0].Shards["group"]) != 8 { // closed: drained, deregistered
		t.Fatalf("after node 2 stopped: %+v", st.Nodes)
	}
}
