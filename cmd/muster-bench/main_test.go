package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/muster-io/muster/internal/bench"
	"github.com/muster-io/muster/internal/testutil"
)

// TestBenchCommand runs muster-bench against already running brokers (an in-process muster
// and kfake) and checks the JSON report it writes.
func TestBenchCommand(t *testing.T) {
	m := testutil.Start(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	for _, client := range []string{"raw", "kgo"} {
		t.Run(client, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "bench.json")
			cmd := benchCommand()
			cmd.SetArgs([]string{"--muster-addr", m.Addr(), "--kfake-addr", kf.ListenAddrs()[0], "--workloads", "apiversions,commit-1,fsync",
				"--conns", "1,2", "--duration", "100ms", "--dir", t.TempDir(), "--out", out, "--client", client})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var rep bench.Report
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Options.Client != client {
				t.Errorf("report says client %q, want %q", rep.Options.Client, client)
			}
			if len(rep.Results) != 9 { // 2 workloads × 2 conns × 2 targets + fsync
				t.Fatalf("%d results, want 9: %+v", len(rep.Results), rep.Results)
			}
			for _, r := range rep.Results {
				if r.Skipped || r.Requests <= 0 || r.Errors != 0 {
					t.Errorf("%s on %s (conns %d): %+v", r.Workload, r.Target, r.Conns, r)
				}
			}
		})
	}
}

func TestBenchCommandRejectsUnknownWorkload(t *testing.T) {
	cmd := benchCommand()
	cmd.SetArgs([]string{"--workloads", "nope", "--no-kfake", "--muster-addr", "127.0.0.1:1"})
	if err := cmd.Execute(); err == nil {
		t.Fatal("unknown workload accepted")
	}
}
