package txn

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// Binaries built once by TestMain: muster and the Go copier.
var musterBin, copierBin string

func TestMain(m *testing.M) {
	bins, cleanup, err := testutil.BuildBinaries("muster-txn-", testutil.MusterPkg, "github.com/muster-io/muster/test/e2e/txn/copier")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin, copierBin = bins[0], bins[1]
	code := m.Run()
	cleanup()
	os.Exit(code)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// proc is a child process the test kills with SIGKILL.
type proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func startProc(t testing.TB, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	return p
}

// kill sends SIGKILL and reaps the process (a no-op once it exited).
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// exited reports whether the process ended on its own.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startMuster runs `muster serve` on addr and dir and waits until its group and transaction
// coordinators answer.
func startMuster(t testing.TB, addr, dir string, overrides ...string) *proc {
	t.Helper()
	args := []string{"serve", "--listen", addr, "--data-dir", dir, "--http-listen", "", "--log-level", "warn",
		"--override", "group.initial.rebalance.delay.ms=0", "--override", "offsets.topic.num.partitions=4",
		"--override", "transaction.state.log.num.partitions=4"}
	for _, o := range overrides {
		args = append(args, "--override", o)
	}
	p := startProc(t, "muster", exec.Command(musterBin, args...))
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("muster on %s did not become ready:\n%s", addr, p.out.String())
		}
		if coordinatorsReady(cl) {
			return p
		}
	}
}

// coordinatorsReady asks FindCoordinator for group and transactional keys of every shard.
func coordinatorsReady(cl *kgo.Client) bool {
	var keys []string
	for i := 0; i < 64; i++ {
		keys = append(keys, "probe-"+strconv.Itoa(i))
	}
	for _, typ := range []int8{0, 1} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, typ, keys
		resp, err := req.RequestWith(ctx, cl)
		cancel()
		if err != nil || len(resp.Coordinators) != len(keys) {
			return false
		}
		for _, c := range resp.Coordinators {
			if c.ErrorCode != 0 {
				return false
			}
		}
	}
	return true
}
