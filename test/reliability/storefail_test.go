package reliability

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSIGTERMAfterTheStoreFailed removes the data dir of a running `muster serve` under produce
// and commit load: Pebble fails its next WAL rotation with a fatal error, whose goroutine the
// guard parks while it holds Pebble's commit pipeline, so every later write blocks for good.
// The node must say so on /readyz and still exit on SIGTERM, without waiting for the writes
// stuck behind the dead pipeline.
func TestSIGTERMAfterTheStoreFailed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the muster binary")
	}
	bin, dir, addr, httpAddr, logf := newServeEnv(t)
	p := startServe(t, bin, dir, addr, httpAddr, logf)
	defer func() {
		select {
		case <-p.done:
		default:
			p.kill()
		}
	}()

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.RecordRetries(1),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(64))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "wedge"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "wedge", Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// Load until the store fails: 256 KiB records fill the 4–8 MiB memtable within moments,
	// and the WAL rotation that follows cannot rename the removed directory's old log.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	value := make([]byte, 256<<10)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; loadCtx.Err() == nil; i++ {
				rctx, rcancel := context.WithTimeout(loadCtx, 2*time.Second)
				cl.Produce(rctx, &kgo.Record{Topic: "wedge", Partition: int32(w), Value: value}, func(*kgo.Record, error) { rcancel() })
				offs := kadm.Offsets{}
				offs.Add(kadm.Offset{Topic: "wedge", Partition: int32(w), At: int64(i)})
				_, _ = adm.CommitOffsets(rctx, fmt.Sprintf("g%d", w), offs)
			}
		}()
	}
	waitFor(t, 30*time.Second, "/readyz to report the failed store", func() bool {
		code, body := httpGet(t, "http://"+httpAddr+"/readyz")
		return code != 200 && strings.Contains(body, "store_failed")
	})
	time.Sleep(500 * time.Millisecond) // let writes queue behind the dead commit pipeline

	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		t.Logf("exited %v after SIGTERM: %v", time.Since(start).Round(time.Millisecond), p.cmd.ProcessState)
	case <-time.After(30 * time.Second):
		t.Fatalf("muster serve still running 30 s after SIGTERM with a failed store (log: %s)", logf.Name())
	}
	stopLoad()
	wg.Wait()
}
