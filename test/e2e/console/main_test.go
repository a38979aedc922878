// Package console tests what muster shows operators of their groups against real brokers (a
// `muster serve` child process, or one in process) with real groups (franz-go consumers, streams
// members): the web console in a real browser (headless Chromium from Debian's package, driven
// with chromedp), its JSON API and its bad input, large groups page by page, lag statuses by
// Burrow's rules against the CLI and the metrics, and rebalance history across SIGKILL.
package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/testutil"
)

// musterBin is the binary built once for the package by TestMain.
var musterBin string

func TestMain(m *testing.M) {
	bins, cleanup, err := testutil.BuildBinaries("muster-console-", testutil.MusterPkg)
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
	cmd        *exec.Cmd
	addr, http string
	dir        string
	out        *syncBuffer
	args       []string
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

// serve starts `muster serve` on a fresh data dir with the overrides and waits until it is
// ready (/readyz).
func serve(t *testing.T, overrides ...string) *proc {
	t.Helper()
	p := &proc{addr: freeAddr(t), http: freeAddr(t), dir: t.TempDir(), out: &syncBuffer{}}
	p.args = []string{"serve", "--listen", p.addr, "--data-dir", p.dir, "--http-listen", p.http, "--log-level", "info",
		"--override", "group.initial.rebalance.delay.ms=0", "--override", "offsets.topic.num.partitions=4"}
	for _, o := range overrides {
		p.args = append(p.args, "--override", o)
	}
	p.start(t)
	return p
}

func (p *proc) start(t *testing.T) {
	t.Helper()
	p.cmd = exec.Command(musterBin, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := p.cmd
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("muster output:\n%s", p.out.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("muster did not become ready:\n%s", p.out.String())
		}
		resp, err := http.Get("http://" + p.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
}

// kill sends SIGKILL and waits.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// url is an address on the HTTP listener.
func (p *proc) url(path string) string { return "http://" + p.http + path }

// getJSON reads an API resource into v, failing on a non-200 answer.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	status, body := get(t, url)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

// tryJSON reads an API resource into v; false on any failure (for polling).
func tryJSON(url string, v any) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	return json.NewDecoder(resp.Body).Decode(v) == nil
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func do(t *testing.T, method, url, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// client is a franz-go client of addr. Its OffsetCommit stops at v9 (topics by name), which
// commit writes.
func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.OffsetCommit.Int16(), 9)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.MaxVersions(vs)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds, failing after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool, state ...func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			for _, s := range state {
				what += " (" + s() + ")"
			}
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// produce writes n records to each partition of topic.
func produce(t *testing.T, cl *kgo.Client, topic string, partitions int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("v-%d-%d", p, i))})
		}
	}
	if err := cl.ProduceSync(ctxT(t, 30*time.Second), recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", topic, err)
	}
}

// commit commits offsets for a group as an admin (generation -1).
func commit(t *testing.T, cl *kgo.Client, group string, offs map[string]map[int32]int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	for topic, ps := range offs {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for p, o := range ps {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, o, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctxT(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("commit %s %s/%d: error %d", group, rt.Topic, rp.Partition, rp.ErrorCode)
			}
		}
	}
}

func newAdm(t *testing.T, p *proc) *kadm.Client { return kadm.NewClient(client(t, p.addr)) }
