package txn

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

func scrape(t *testing.T, b *testutil.Broker) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "muster_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// The transaction metrics move as transactions begin, commit, abort and time out, and the last
// stable offset lag of a partition shows the records an open transaction holds back.
func TestTransactionMetrics(t *testing.T) {
	b := testutil.Start(t, "transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "m", 1)
	m0 := scrape(t, b)
	for _, name := range []string{"muster_transactions_started_total", "muster_transactions_committed_total",
		"muster_transactions_aborted_total", "muster_transactions_timed_out_total", `muster_transactions{state="Ongoing"}`,
		`muster_partition_last_stable_offset_lag{partition="0",topic="m"}`} {
		if _, ok := m0[name]; !ok {
			t.Errorf("metric %s not exported", name)
		}
	}
	p := newClient(t, b.Addr(), kgo.TransactionalID("tx-m"), kgo.DefaultProduceTopic("m"))
	for _, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := p.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	// One more, left open: it holds two records back, then times out.
	slow := newClient(t, b.Addr(), kgo.TransactionalID("tx-slow"), kgo.DefaultProduceTopic("m"), kgo.TransactionTimeout(time.Second))
	if err := slow.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := slow.ProduceSync(ctx, kgo.StringRecord("a"), kgo.StringRecord("b")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lag := `muster_partition_last_stable_offset_lag{partition="0",topic="m"}`
	m1 := scrape(t, b)
	if m1[lag] != 2 || m1[`muster_transactions{state="Ongoing"}`] != 1 {
		t.Errorf("open transaction: lag %v, ongoing %v; want 2 and 1", m1[lag], m1[`muster_transactions{state="Ongoing"}`])
	}
	var m2 map[string]float64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m2 = scrape(t, b); m2["muster_transactions_timed_out_total"] == 1 && m2[lag] == 0 {
			break
		}
	}
	for name, want := range map[string]float64{"muster_transactions_started_total": 4, "muster_transactions_committed_total": 2,
		"muster_transactions_aborted_total": 2, "muster_transactions_timed_out_total": 1, lag: 0,
		`muster_transactions{state="CompleteAbort"}`: 1, `muster_transactions{state="CompleteCommit"}`: 1} {
		if got := m2[name]; got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if m2[`muster_transaction_markers_seconds_count{outcome="commit",result="ok"}`] != 2 {
		t.Errorf("marker latency observations: %v", m2[`muster_transaction_markers_seconds_count{outcome="commit",result="ok"}`])
	}
}
