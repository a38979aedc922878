package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/cli/consumergroups"
	"github.com/muster-io/muster/internal/testutil"
)

// TestMain lets the test binary run the example's main as a child process (asMain), exactly as
// `go run ./examples/quickstart` would.
func TestMain(m *testing.M) {
	if os.Getenv("QUICKSTART_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestQuickstart runs the README's "Try it" as written, twice, against a real muster on a
// loopback port, then the `muster consumer-groups --describe` that follows it: the group has
// committed an offset for each record it consumed.
func TestQuickstart(t *testing.T) {
	b := testutil.Start(t)
	for run := 1; run <= 2; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "-brokers", b.Addr())
		cmd.Env = append(os.Environ(), "QUICKSTART_AS_MAIN=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out)
		}
		if !strings.Contains(string(out), `consumed "hello" from orders/`) || !strings.Contains(string(out), "committed the offsets of group g1") {
			t.Fatalf("run %d printed:\n%s", run, out)
		}
	}
	r := clikittest.Run(consumergroups.NewCommand(), "--bootstrap-server", b.Addr(), "--describe", "--group", "g1", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("describe: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Two records consumed and committed: the committed offsets of orders add up to 2, with no lag.
	var committed, lag int64
	for _, p := range describedPartitions(t, r.Stdout) {
		if p.Topic != "orders" || p.CurrentOffset == nil {
			continue
		}
		committed += *p.CurrentOffset
		if p.Lag != nil {
			lag += *p.Lag
		}
	}
	if committed != 2 || lag != 0 {
		t.Fatalf("committed offsets of orders add up to %d with lag %d, want 2 and 0:\n%s", committed, lag, r.Stdout)
	}
	// The text view (what the README shows) lists the topic too.
	text := clikittest.Run(consumergroups.NewCommand(), "--bootstrap-server", b.Addr(), "--describe", "--group", "g1")
	if text.Code != 0 || !strings.Contains(text.Stdout, "orders") || !strings.Contains(text.Stdout, "CURRENT-OFFSET") {
		t.Fatalf("describe: exit %d\n%s%s", text.Code, text.Stdout, text.Stderr)
	}
}

// describedPartition is the part of a --describe --output json offsets row the test reads.
type describedPartition struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	Lag           *int64 `json:"lag"`
}

func describedPartitions(t *testing.T, doc string) []describedPartition {
	t.Helper()
	var d struct {
		Groups []struct {
			Offsets []describedPartition `json:"offsets"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("describe --output json: %v\n%s", err, doc)
	}
	if len(d.Groups) != 1 {
		t.Fatalf("describe --output json: %d groups\n%s", len(d.Groups), doc)
	}
	return d.Groups[0].Offsets
}
