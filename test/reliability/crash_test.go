package reliability

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// ledger is what clients were told is durable: every acknowledged record (acks=all) by
// partition and offset, and the highest acknowledged commit per group and partition.
type ledger struct {
	mu      sync.Mutex
	records map[int32]map[int64]string
	commits map[string]map[int32]int64
	nrec    int
	ncommit int
	byGroup map[string]int
}

func (l *ledger) record(p int32, off int64, v string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.records[p] == nil {
		l.records[p] = map[int64]string{}
	}
	l.records[p][off] = v
	l.nrec++
}

func (l *ledger) commit(g string, p int32, off int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.commits[g] == nil {
		l.commits[g] = map[int32]int64{}
	}
	if off > l.commits[g][p] {
		l.commits[g][p] = off
	}
	l.ncommit++
	l.byGroup[g]++
}

// serveProc is a `muster serve` child process.
type serveProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// newServeEnv sets up a test that runs `muster serve`: the binary, a data dir in a fresh temp
// dir, two free loopback addresses (Kafka, HTTP) and the log file the children write (closed
// when the test ends).
func newServeEnv(t *testing.T) (bin, dir, addr, httpAddr string, logf *os.File) {
	t.Helper()
	tmp := t.TempDir()
	bin = testutil.BuildMuster(t)
	logf, err := os.Create(filepath.Join(tmp, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	return bin, filepath.Join(tmp, "data"), freePort(t), freePort(t), logf
}

// startNoWait execs `muster serve` without waiting for it to be ready; extra are further
// serve flags.
func startNoWait(t *testing.T, bin, dir, addr, httpAddr string, logf *os.File, extra ...string) *serveProc {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dir, "--listen", addr, "--http-listen", httpAddr,
		"--log-level", "warn", "--override", "group.initial.rebalance.delay.ms=0",
		"--override", "offsets.topic.num.partitions=8"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	return p
}

// startServe execs `muster serve` and waits until /readyz reports every shard loaded.
func startServe(t *testing.T, bin, dir, addr, httpAddr string, logf *os.File, extra ...string) *serveProc {
	t.Helper()
	p := startNoWait(t, bin, dir, addr, httpAddr, logf, extra...)
	cmd := p.cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("muster serve exited during start-up: %v (log: %s)", cmd.ProcessState, logf.Name())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("muster serve not ready after 30s (log: %s)", logf.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// peakRSS is the child's peak resident set (VmHWM) in KiB, 0 if unknown (non-Linux).
func (p *serveProc) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func (p *serveProc) kill() {
	p.cmd.Process.Kill() // SIGKILL
	<-p.done
}

const (
	crashTopic      = "crash"
	crashPartitions = 4
)

// workload runs until ctx ends: an acks=all producer (8 records in flight), a classic group
// member that consumes and commits what it consumed, and an admin committing a counter to a
// simple group. Only successful acknowledgements enter the ledger.
func workload(ctx context.Context, t *testing.T, addr string, cycle int, l *ledger) {
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // producer
		defer wg.Done()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(crashTopic),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.MaxBufferedRecords(8))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		for i := 0; ctx.Err() == nil; i++ {
			v := fmt.Sprintf("c%d-r%d", cycle, i)
			cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				if err == nil {
					l.record(r.Partition, r.Offset, v)
				}
			})
		}
	}()
	go func() { // classic group member: consume, then commit what was consumed
		defer wg.Done()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("crash-members"), kgo.ConsumeTopics(crashTopic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
			kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(6*time.Second),
			// Static membership (KIP-345): each incarnation replaces the one the crash left
			// behind at once instead of waiting for its session to expire.
			kgo.InstanceID("crash-member-1"))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			fs := cl.PollFetches(pctx)
			cancel()
			offs := map[string]map[int32]kgo.EpochOffset{}
			fs.EachPartition(func(p kgo.FetchTopicPartition) {
				if n := len(p.Records); n > 0 {
					if offs[p.Topic] == nil {
						offs[p.Topic] = map[int32]kgo.EpochOffset{}
					}
					offs[p.Topic][p.Partition] = kgo.EpochOffset{Epoch: -1, Offset: p.Records[n-1].Offset + 1}
				}
			})
			if len(offs) == 0 {
				continue
			}
			cl.CommitOffsetsSync(ctx, offs, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				if err != nil {
					return
				}
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if rp.ErrorCode == 0 {
							l.commit("crash-members", rp.Partition, offs[rt.Topic][rp.Partition].Offset)
						}
					}
				}
			})
		}
	}()
	go func() { // admin commits to a simple group
		defer wg.Done()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		for i := int64(1); ctx.Err() == nil; i++ {
			var os_ kadm.Offsets
			p := int32(i % crashPartitions)
			at := int64(cycle)*1_000_000 + i
			os_.Add(kadm.Offset{Topic: crashTopic, Partition: p, At: at, LeaderEpoch: -1})
			resp, err := adm.CommitOffsets(ctx, "crash-simple", os_)
			if err == nil && resp.Error() == nil {
				l.commit("crash-simple", p, at)
			}
		}
	}()
	wg.Wait()
}

// verify checks every acknowledged record and commit against a fresh broker incarnation and
// returns how many writes it checked.
func verify(t *testing.T, addr string, l *ledger) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, crashTopic)
	if err != nil {
		t.Fatal(err)
	}
	consume := map[string]map[int32]kgo.Offset{crashTopic: {}}
	want := int64(0)
	for p := int32(0); p < crashPartitions; p++ {
		consume[crashTopic][p] = kgo.NewOffset().AtStart()
		e, _ := ends.Lookup(crashTopic, p)
		want += e.Offset
		for off := range l.records[p] {
			if off >= e.Offset {
				t.Fatalf("partition %d: acknowledged offset %d is past the end offset %d after restart", p, off, e.Offset)
			}
		}
	}
	rd, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(consume))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got := map[int32]map[int64]string{}
	for n := int64(0); n < want; {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading back: %d of %d records: %v", n, want, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if got[r.Partition] == nil {
				got[r.Partition] = map[int64]string{}
			}
			got[r.Partition][r.Offset] = string(r.Value)
			n++
		})
	}
	checked := 0
	for p, recs := range l.records {
		for off, v := range recs {
			if got[p][off] != v {
				t.Fatalf("acknowledged record %q at partition %d offset %d lost (found %q)", v, p, off, got[p][off])
			}
			checked++
		}
	}
	for g, parts := range l.commits {
		offs, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			t.Fatalf("fetch offsets of %s: %v", g, err)
		}
		for p, at := range parts {
			o, ok := offs.Lookup(crashTopic, p)
			if !ok || o.Err != nil || o.At < at {
				t.Fatalf("group %s partition %d: committed %d (%v), acknowledged %d", g, p, o.At, o.Err, at)
			}
			checked++
		}
	}
	return checked
}

// TestCrashLoop runs `muster serve` as a child process and SIGKILLs it at random moments while
// clients produce (acks=all) and commit offsets (a classic group member and a simple group),
// restarting it each time; after every restart every acknowledged record must be at its offset
// and every group's committed offset at least the last acknowledged commit. Every third cycle
// also kills a start-up during recovery. Cycles: 3, or 100 with MUSTER_SOAK=1 (make soak).
func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the muster binary")
	}
	cycles := 3
	if os.Getenv("MUSTER_SOAK") != "" {
		cycles = 100
		if n, err := strconv.Atoi(os.Getenv("MUSTER_SOAK_CYCLES")); err == nil && n > 0 {
			cycles = n
		}
	}
	bin, dir, addr, httpAddr, logf := newServeEnv(t)

	p := startServe(t, bin, dir, addr, httpAddr, logf)
	{
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err = kadm.NewClient(cl).CreateTopic(ctx, crashPartitions, 1, nil, crashTopic)
		cancel()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	l := &ledger{records: map[int32]map[int64]string{}, commits: map[string]map[int32]int64{}, byGroup: map[string]int{}}
	rnd := rand.New(rand.NewSource(time.Now().UnixNano()))
	checked, earlyKills := 0, 0
	var peak int64
	for c := 1; c <= cycles; c++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { workload(ctx, t, addr, c, l); close(done) }()
		time.Sleep(time.Duration(300+rnd.Intn(1200)) * time.Millisecond)
		// Until the group member has had a commit acknowledged, keep the broker up a little
		// longer (the first join takes a moment), so every run exercises member commits.
		for wait := time.Now().Add(15 * time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
			l.mu.Lock()
			n := l.byGroup["crash-members"]
			l.mu.Unlock()
			if n > 0 {
				break
			}
		}
		peak = max(peak, p.peakRSS())
		p.kill()
		cancel()
		<-done
		if c%3 == 0 {
			// Every third cycle also kills a start-up mid-recovery (0–100 ms after exec,
			// while Pebble replays its WAL and shards load).
			early := startNoWait(t, bin, dir, addr, httpAddr, logf)
			time.Sleep(time.Duration(rnd.Intn(100)) * time.Millisecond)
			early.kill()
			earlyKills++
		}
		p = startServe(t, bin, dir, addr, httpAddr, logf)
		n := verify(t, addr, l)
		checked += n
		t.Logf("cycle %d: killed and restarted; %d acknowledged writes verified (%d records, %d commits acknowledged so far)",
			c, n, l.nrec, l.ncommit)
	}
	p.kill()
	t.Logf("%d SIGKILL cycles (+%d kills during start-up), %d write checks, %d records and %d commits acknowledged in total (by group: %v); peak RSS of muster serve %d MiB",
		cycles, earlyKills, checked, l.nrec, l.ncommit, l.byGroup, peak>>10)
	if l.nrec == 0 || l.byGroup["crash-simple"] == 0 || l.byGroup["crash-members"] == 0 {
		t.Fatalf("workload acknowledged %d records and commits %v; not everything was exercised", l.nrec, l.byGroup)
	}
}
