package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cliLag is `muster consumer-groups --describe --lag-status --output json`.
type cliLag struct {
	Group       string `json:"group"`
	EvaluatedAt string `json:"evaluated_at"`
	Status      string `json:"status"`
	TotalLag    int64  `json:"total_lag"`
	MaxLag      int64  `json:"max_lag"`
	Partitions  []struct {
		Topic           string `json:"topic"`
		Partition       int32  `json:"partition"`
		CommittedOffset int64  `json:"committed_offset"`
		LogEndOffset    int64  `json:"log_end_offset"`
		Lag             int64  `json:"lag"`
		TimeLagMs       int64  `json:"time_lag_ms"`
		Status          string `json:"status"`
	} `json:"partitions"`
}

// muster runs the muster binary (a CLI command) and returns its stdout.
func muster(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, musterBin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, errb.String())
	}
	return out.String(), nil
}

func lagStatus(t *testing.T, p *proc, groups ...string) map[string]cliLag {
	t.Helper()
	args := []string{"consumer-groups", "--bootstrap-server", p.addr, "--http-server", p.http, "--describe", "--lag-status", "--output", "json"}
	for _, g := range groups {
		args = append(args, "--group", g)
	}
	out, err := muster(t, args...)
	if err != nil {
		t.Fatalf("muster %v: %v", args, err)
	}
	var ls []cliLag
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatalf("lag status JSON: %v in %s", err, out)
	}
	m := map[string]cliLag{}
	for _, l := range ls {
		m[l.Group] = l
	}
	return m
}

// scrape reads /metrics: series (with labels) → value.
func scrape(t *testing.T, p *proc) map[string]float64 {
	t.Helper()
	resp, err := http.Get(p.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "muster_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// TestLagStatusBurrowRules: three consumers of their own partitions, each committing with
// OffsetCommit while records keep arriving: one stops committing (STOP), one commits advancing
// offsets but falls further behind (WARNING), one commits an offset below an earlier one
// (REWIND). Each gets Burrow's status within the window of commits, as
// `muster consumer-groups --describe --lag-status` shows it, and the Prometheus series say the
// same as the CLI.
func TestLagStatusBurrowRules(t *testing.T) {
	p := serve(t, "muster.lag.sample.interval.ms=100", "muster.lag.window.commits=5", "muster.lag.min.distance.ms=0",
		"muster.lag.partition.metrics.groups=lag-.*")
	adm := kadm.NewClient(client(t, p.addr))
	ctx := ctxT(t, 2*time.Minute)
	for _, topic := range []string{"stops", "behind", "rewinds"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	prod := client(t, p.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cl := client(t, p.addr)
	produce(t, prod, "stops", 1, 50)
	produce(t, prod, "behind", 1, 50)
	produce(t, prod, "rewinds", 1, 50)

	// Ten rounds of commits 150 ms apart: "stops" and "rewinds" keep up (lag shrinks), "behind"
	// commits 2 more each round while 5 more arrive.
	for i := 0; i < 10; i++ {
		produce(t, prod, "behind", 1, 5)
		commit(t, cl, "lag-stops", map[string]map[int32]int64{"stops": {0: int64(10 + 3*i)}})
		commit(t, cl, "lag-behind", map[string]map[int32]int64{"behind": {0: int64(10 + 2*i)}})
		commit(t, cl, "lag-rewinds", map[string]map[int32]int64{"rewinds": {0: int64(10 + 3*i)}})
		time.Sleep(150 * time.Millisecond)
	}
	// The rewind: an offset below the last one, then the consumer carries on.
	commit(t, cl, "lag-rewinds", map[string]map[int32]int64{"rewinds": {0: 5}})
	for i := 0; i < 2; i++ {
		time.Sleep(150 * time.Millisecond)
		commit(t, cl, "lag-rewinds", map[string]map[int32]int64{"rewinds": {0: int64(6 + i)}})
		commit(t, cl, "lag-behind", map[string]map[int32]int64{"behind": {0: int64(30 + 2*i)}})
		produce(t, prod, "behind", 1, 5)
	}
	// "behind" keeps committing (so it is not STOP) and keeps falling behind.
	want := map[string][2]string{
		"lag-stops":   {"ERROR", "STOP"},
		"lag-behind":  {"WARNING", "WARNING"},
		"lag-rewinds": {"ERROR", "REWIND"},
	}
	off := int64(34)
	var got map[string]cliLag
	eventually(t, 20*time.Second, "Burrow's statuses", func() bool {
		off += 2
		produce(t, prod, "behind", 1, 5)
		commit(t, cl, "lag-behind", map[string]map[int32]int64{"behind": {0: off}})
		got = lagStatus(t, p, "lag-stops", "lag-behind", "lag-rewinds")
		for g, w := range want {
			l := got[g]
			if l.Status != w[0] || len(l.Partitions) != 1 || l.Partitions[0].Status != w[1] {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%+v", got) })
	for g, l := range got {
		pl := l.Partitions[0]
		if pl.Lag <= 0 || pl.Lag != pl.LogEndOffset-pl.CommittedOffset || l.TotalLag != pl.Lag {
			t.Errorf("%s: lag %+v", g, l)
		}
		if pl.TimeLagMs < 0 {
			t.Errorf("%s: time lag unknown", g)
		}
	}

	// The Prometheus series say what the CLI says, when both read the same lag sample.
	eventually(t, 20*time.Second, "metrics and the CLI read the same sample and agree", func() bool {
		before := lagStatus(t, p, "lag-stops", "lag-behind", "lag-rewinds")
		m := scrape(t, p)
		after := lagStatus(t, p, "lag-stops", "lag-behind", "lag-rewinds")
		at, err := time.Parse(time.RFC3339Nano, before["lag-stops"].EvaluatedAt)
		if err != nil || before["lag-stops"].EvaluatedAt != after["lag-stops"].EvaluatedAt ||
			m["muster_lag_sample_timestamp_seconds"] != float64(at.UnixMilli())/1000 {
			return false // a new sample came in between: try again
		}
		for g, l := range before {
			pl := l.Partitions[0]
			labels := fmt.Sprintf(`group="%s",partition="0",topic="%s"`, g, pl.Topic)
			checks := map[string]float64{
				fmt.Sprintf(`muster_group_lag_status{group="%s",status="%s"}`, g, l.Status):                                               1,
				fmt.Sprintf(`muster_group_lag_total{group="%s"}`, g):                                                                      float64(l.TotalLag),
				fmt.Sprintf(`muster_group_lag_max{group="%s"}`, g):                                                                        float64(l.MaxLag),
				`muster_group_partition_lag{` + labels + `}`:                                                                              float64(pl.Lag),
				`muster_group_partition_committed_offset{` + labels + `}`:                                                                 float64(pl.CommittedOffset),
				`muster_group_partition_log_end_offset{` + labels + `}`:                                                                   float64(pl.LogEndOffset),
				fmt.Sprintf(`muster_group_partition_lag_status{group="%s",partition="0",status="%s",topic="%s"}`, g, pl.Status, pl.Topic): 1,
			}
			for series, v := range checks {
				if got, ok := m[series]; !ok || got != v {
					t.Errorf("%s = %v (exported %v), the CLI says %v", series, got, ok, v)
				}
			}
		}
		return true
	})

	// The text view names the statuses too.
	out, err := muster(t, "consumer-groups", "--bootstrap-server", p.addr, "--http-server", p.http, "--describe", "--lag-status", "--group", "lag-stops")
	if err != nil || !strings.Contains(out, "ERROR") || !strings.Contains(out, "STOP") || !strings.Contains(out, "TIME-LAG") {
		t.Errorf("text lag status: %v\n%s", err, out)
	}
}
