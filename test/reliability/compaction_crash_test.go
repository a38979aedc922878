package reliability

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keyLedger is what the producer was told is durable on the compacted topic: every
// acknowledged record by offset, and per key the offset of its latest acknowledged record.
type keyLedger struct {
	mu     sync.Mutex
	byOff  map[int64]string // offset → "key=value"
	latest map[string]int64
	n      int
}

func (l *keyLedger) ack(off int64, key, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byOff[off] = key + "=" + value
	if off > l.latest[key] || l.latest[key] == 0 && off == 0 {
		l.latest[key] = off
	}
	l.n++
}

const compactTopic = "compacted"

// TestCompactionCrashLoop SIGKILLs `muster serve` at random moments while a producer writes
// keyed records (acks=all) to a compacted topic with tiny segments and the log cleaner runs
// continually (log.cleaner.backoff.ms=5), so kills land during cleaning rewrites. After every
// restart a consumer reads the whole partition: no offset appears twice, every record read at
// an acknowledged offset is the acknowledged one, and for every key the newest record read is
// at or after its newest acknowledged offset — the latest value of a key is never lost (only
// an even newer write may have superseded it). Compaction must have removed records by the end.
func TestCompactionCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the muster binary")
	}
	bin, dir, addr, httpAddr, logf := newServeEnv(t)
	extra := []string{"--override", "log.cleaner.backoff.ms=5"}
	p := startServe(t, bin, dir, addr, httpAddr, logf, extra...)
	{
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cfg := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "internal.segment.bytes": kadm.StringPtr("4096"),
			"min.cleanable.dirty.ratio": kadm.StringPtr("0.01")}
		_, err = kadm.NewClient(cl).CreateTopic(ctx, 1, 1, cfg, compactTopic)
		cancel()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	l := &keyLedger{byOff: map[int64]string{}, latest: map[string]int64{}}
	rnd := rand.New(rand.NewSource(time.Now().UnixNano()))
	var read int
	for c := 1; c <= 4; c++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { keyedWorkload(ctx, t, addr, c, l); close(done) }()
		time.Sleep(time.Duration(400+rnd.Intn(900)) * time.Millisecond)
		p.kill()
		cancel()
		<-done
		p = startServe(t, bin, dir, addr, httpAddr, logf, extra...)
		read = verifyCompacted(t, addr, l)
	}
	p.kill()
	l.mu.Lock()
	defer l.mu.Unlock()
	if read >= l.n {
		t.Fatalf("read %d records of %d acknowledged: nothing was compacted (log: %s)", read, l.n, logf.Name())
	}
	t.Logf("%d acknowledged records, %d left after compaction", l.n, read)
}

// keyedWorkload produces records with 64 keys until ctx ends.
func keyedWorkload(ctx context.Context, t *testing.T, addr string, cycle int, l *keyLedger) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(compactTopic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.MaxBufferedRecords(16),
		kgo.ProducerBatchCompression(kgo.SnappyCompression(), kgo.NoCompression()))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	for i := 0; ctx.Err() == nil; i++ {
		k, v := fmt.Sprintf("k%02d", i%64), fmt.Sprintf("c%d-%d", cycle, i)
		cl.Produce(ctx, &kgo.Record{Key: []byte(k), Value: []byte(v)}, func(r *kgo.Record, err error) {
			if err == nil {
				l.ack(r.Offset, k, v)
			}
		})
	}
}

// verifyCompacted reads the topic back and checks it against the ledger; it returns how many
// records it read.
func verifyCompacted(t *testing.T, addr string, l *keyLedger) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(compactTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, compactTopic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(compactTopic, 0)
	seen := map[int64]bool{}
	newest := map[string]int64{}
	last := int64(-1)
	n := 0
	for last < end.Offset-1 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading back: at offset %d of %d: %v", last, end.Offset, ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			if seen[r.Offset] || r.Offset <= last {
				t.Fatalf("offset %d read twice or out of order (after %d)", r.Offset, last)
			}
			seen[r.Offset], last = true, r.Offset
			n++
			kv := string(r.Key) + "=" + string(r.Value)
			if want, ok := l.byOff[r.Offset]; ok && want != kv {
				t.Fatalf("offset %d holds %s, acknowledged %s", r.Offset, kv, want)
			}
			if !strings.HasPrefix(kv, "k") {
				t.Fatalf("offset %d holds a foreign record %q", r.Offset, kv)
			}
			newest[string(r.Key)] = r.Offset
		})
	}
	for k, off := range l.latest {
		if got, ok := newest[k]; !ok || got < off {
			t.Fatalf("key %s: newest record read at %d (present %v), newest acknowledged at %d: a retained record was lost", k, got, ok, off)
		}
	}
	return n
}
