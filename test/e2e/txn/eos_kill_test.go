package txn

import (
	"context"
	"fmt"
	"math/rand"
	"os/exec"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// copierCmd builds the command of one copier run (instance is its group.instance.id where the
// client supports static membership).
type copierCmd func(addr string) *exec.Cmd

// goCopier runs the Go copier with a client (kgo, sarama, confluent).
func goCopier(client string) copierCmd {
	return func(addr string) *exec.Cmd {
		return exec.Command(copierBin, "-client", client, "-brokers", addr, "-group", "copy-"+client,
			"-txn-id", "copier-"+client, "-instance", "copier-"+client, "-in", "in", "-out", "out", "-hold", "150ms")
	}
}

// runKillCopy is the exactly-once property under crashes: n records are produced to in; a
// copier (a real process) copies in → out in transactions while it is SIGKILLed and restarted
// several times, and muster itself is SIGKILLed and restarted once mid-copy. At the end a
// read_committed consumer of out sees each input record exactly once, and the group's committed
// offsets equal the end of in. A read_uncommitted consumer may see aborted duplicates.
func runKillCopy(t *testing.T, client string, cmd copierCmd, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	addr, dir := freeAddr(t), t.TempDir()
	m := startMuster(t, addr, dir, "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000")
	createTopic(t, ctx, addr, "in", 3)
	createTopic(t, ctx, addr, "out", 3)
	// The input arrives while the copier runs and dies: n records over about 8 seconds, by a
	// producer that retries across muster's restart (idempotent, so no duplicate input).
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		p := newClient(t, addr, kgo.DefaultProduceTopic("in"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
			kgo.RecordRetries(1000), kgo.RetryTimeout(time.Minute),
			kgo.ProducerBatchCompression(kgo.NoCompression())) // kafkajs reads no snappy
		for i := 0; i < n && ctx.Err() == nil; i += 25 {
			var recs []*kgo.Record
			for j := i; j < i+25 && j < n; j++ {
				recs = append(recs, kgo.StringRecord(fmt.Sprintf("v-%d", j)))
			}
			if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Errorf("produce input: %v", err)
				return
			}
			time.Sleep(time.Duration(8000*25/n) * time.Millisecond)
		}
	}()
	group := "copy-" + client
	adm := kadm.NewClient(newClient(t, addr))
	rnd := rand.New(rand.NewSource(time.Now().UnixNano()))
	var maxSeen int64
	progress := func() int64 {
		p := committedSum(ctx, adm, group, "in")
		if p >= 0 && p < maxSeen {
			offs, err := adm.FetchOffsets(ctx, group)
			t.Errorf("committed offsets went back from %d to %d: %v %v", maxSeen, p, offs, err)
		}
		maxSeen = max(maxSeen, p)
		return p
	}
	// waitProgress waits until the committed offsets pass last (the copier did work), at most d.
	waitProgress := func(last int64, d time.Duration) int64 {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if p := progress(); p > last {
				return p
			}
			time.Sleep(50 * time.Millisecond)
		}
		return progress()
	}
	last := int64(0)
	kills := 0
	for round := 0; round < 4; round++ {
		c := startProc(t, client+" copier", cmd(addr))
		last = waitProgress(last, 30*time.Second)
		time.Sleep(time.Duration(200+rnd.Intn(800)) * time.Millisecond) // mid-transaction, most likely
		if round == 2 {
			// muster dies under the running copier and comes back on the same data dir.
			m.kill()
			m = startMuster(t, addr, dir, "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000")
			adm = kadm.NewClient(newClient(t, addr))
			last = waitProgress(progress(), 30*time.Second)
			time.Sleep(time.Duration(rnd.Intn(400)) * time.Millisecond)
		}
		c.kill()
		kills++
		last = progress()
		t.Logf("round %d: copier SIGKILLed with %d of %d input offsets committed", round, last, n)
	}
	<-produced
	end := endOffsets(t, ctx, adm, "in")
	if end != int64(n) {
		t.Fatalf("in holds %d records, want %d", end, n)
	}
	c := startProc(t, client+" copier", cmd(addr))
	for progress() != end && ctx.Err() == nil {
		if c.exited() {
			c = startProc(t, client+" copier", cmd(addr)) // an EOS app that crashed on an error restarts
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.kill()
	if ctx.Err() != nil {
		t.Fatalf("the copier did not finish: committed %d of %d", progress(), end)
	}
	checkExactlyOnce(t, ctx, addr, group, "in", "out", "v", n)
	ru := readAll(t, ctx, addr, "out", false, 2*time.Second)
	t.Logf("%s: %d kills of the copier, 1 of muster; read_uncommitted sees %d records (%d aborted duplicates), read_committed exactly %d",
		client, kills, len(ru), len(ru)-n, n)
}

func TestEOSKillFranzGo(t *testing.T) { runKillCopy(t, "kgo", goCopier("kgo"), 3000) }

func TestEOSKillSarama(t *testing.T) { runKillCopy(t, "sarama", goCopier("sarama"), 3000) }

func TestEOSKillConfluent(t *testing.T) { runKillCopy(t, "confluent", goCopier("confluent"), 3000) }
