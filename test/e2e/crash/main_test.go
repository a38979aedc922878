// Package crash runs a real `muster serve` child process and kills it with SIGKILL to check
// that acknowledged records and committed offsets survive a crash.
package crash

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

// musterBin is the binary built once for the package by TestMain.
var musterBin string

func TestMain(m *testing.M) {
	bins, cleanup, err := testutil.BuildBinaries("muster-crash-", testutil.MusterPkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin = bins[0]
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// proc is a `muster serve` child process.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	dir  string
	out  *syncBuffer
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

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startProc starts `muster serve` on addr and dir (with config overrides) and waits until it answers ApiVersions and
// its coordinator is loaded (FindCoordinator answers without error).
func startProc(t *testing.T, addr, dir string, overrides ...string) *proc {
	t.Helper()
	p := &proc{t: t, addr: addr, dir: dir, out: &syncBuffer{}}
	args := []string{"serve", "--listen", addr, "--data-dir", dir, "--http-listen", "",
		"--override", "group.initial.rebalance.delay.ms=0", "--override", "offsets.topic.num.partitions=4",
		"--log-level", "warn"}
	for _, o := range overrides {
		args = append(args, "--override", o)
	}
	p.cmd = exec.Command(musterBin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("muster output:\n%s", p.out.String())
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("muster on %s did not become ready:\n%s", addr, p.out.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey = "probe"
		resp, err := req.RequestWith(ctx, cl)
		cancel()
		if err == nil && resp.ErrorCode == 0 {
			return p
		}
	}
}

// kill sends SIGKILL and reaps the process.
func (p *proc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	_ = p.cmd.Wait()
}
