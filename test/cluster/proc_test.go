package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// node is a `muster serve --store` child process.
type node struct {
	t     testing.TB
	id    int32
	url   string
	addr  string
	http  string
	dir   string
	extra []string
	cmd   *exec.Cmd
	out   *syncBuffer
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

// newNode prepares node id of the cluster on url (started by start).
func newNode(t testing.TB, url string, id int32, extra ...string) *node {
	n := &node{t: t, id: id, url: url, addr: freeAddr(t), http: freeAddr(t), dir: t.TempDir(), extra: extra}
	t.Cleanup(func() {
		if n.cmd != nil && n.cmd.ProcessState == nil {
			n.cmd.Process.Signal(syscall.SIGCONT)
			n.cmd.Process.Kill()
			n.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("node %d output:\n%s", n.id, n.out.String())
		}
	})
	return n
}

// start runs the process and waits until /readyz says ready.
func (n *node) start() {
	n.t.Helper()
	n.launch()
	n.waitReady(30 * time.Second)
}

// launch runs the process.
func (n *node) launch() {
	n.t.Helper()
	args := []string{"serve", "--data-dir", n.dir, "--http-listen", n.http,
		"--override", fmt.Sprintf("node.id=%d", n.id), "--override", "group.initial.rebalance.delay.ms=0",
		"--override", "offsets.topic.num.partitions=12", "--log-level", "info"}
	if !n.hasListeners() { // listeners in extra: n.addr is one of them
		args = append(args, "--listen", n.addr)
	}
	if n.url != "" { // "" : the embedded store, one node
		args = append(args, "--store", n.url)
	}
	for _, e := range n.extra {
		args = append(args, "--override", e)
	}
	if n.out == nil {
		n.out = &syncBuffer{}
	}
	fmt.Fprintf(n.out, "---- start %s\n", time.Now().Format(time.RFC3339Nano))
	bin := musterBin
	if b := os.Getenv("MUSTER_BENCH_BIN"); b != "" {
		bin = b // benchmarks: compare another build
	}
	n.cmd = exec.Command(bin, args...)
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	// A test binary killed by a timeout takes its nodes with it.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) hasListeners() bool {
	for _, e := range n.extra {
		if strings.HasPrefix(e, "listeners=") {
			return true
		}
	}
	return false
}

func (n *node) readyz() (int, string) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + n.http + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (n *node) waitReady(d time.Duration) {
	n.t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := n.readyz(); code == 200 {
			return
		}
		if time.Now().After(deadline) {
			_, msg := n.readyz()
			n.t.Fatalf("node %d not ready: %s\n%s", n.id, msg, n.out.String())
		}
	}
}

// metric returns the sum of the samples of a metric family on the node's /metrics.
func (n *node) metric(name string) float64 {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + n.http + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

func (n *node) signal(sig syscall.Signal) {
	n.t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		n.t.Fatal(err)
	}
}

// kill sends SIGKILL and reaps the process.
func (n *node) kill() {
	n.signal(syscall.SIGKILL)
	n.cmd.Wait()
}

// stop sends SIGTERM and waits for a graceful exit.
func (n *node) stop() {
	n.t.Helper()
	n.signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- n.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			n.t.Errorf("node %d exited after SIGTERM: %v", n.id, err)
		}
	case <-time.After(30 * time.Second):
		n.t.Fatalf("node %d did not stop after SIGTERM", n.id)
	}
}

// raw sends one request to the node itself (no routing).
func (n *node) raw(req kmsg.Request) (kmsg.Response, error) {
	c, err := testutil.DialRaw(n.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(req)
}

// createTopic creates topic in the cluster through node n (TOPIC_ALREADY_EXISTS is fine).
func (n *node) createTopic(topic string, partitions int32) {
	n.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis, req.Version = 10000, 5
	resp, err := n.raw(req)
	if err != nil {
		n.t.Fatal(err)
	}
	if c := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; c != 0 && c != 36 {
		n.t.Fatalf("create topic on node %d: error %d", n.id, c)
	}
}

// coordinatorOf asks node n for group's coordinator.
func (n *node) coordinatorOf(ctx context.Context, group string) (int32, int16) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey, req.Version = group, 3
	resp, err := n.raw(req)
	if err != nil {
		return -1, -1
	}
	fc := resp.(*kmsg.FindCoordinatorResponse)
	return fc.NodeID, fc.ErrorCode
}
