package e2e

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// clRawRequest builds a request frame with a v1 request header (key, version, correlation id,
// client id) around body; flexible adds the empty tag section of a v2 header.
func clRawRequest(key, version int16, flexible bool, body []byte) []byte {
	var b []byte
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 7)
	b = binary.BigEndian.AppendUint16(b, 3)
	b = append(b, "bad"...)
	if flexible {
		b = append(b, 0)
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// clMetric scrapes one unlabelled value from the broker's /metrics.
func clMetric(t *testing.T, b *testutil.Broker, name string) int64 {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == name {
			v, _ := strconv.ParseFloat(f[1], 64)
			return int64(v)
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// clExpectClosed fails unless the server closes c (EOF or reset, not a timeout).
func clExpectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after bad input")
	}
}

// TestBadFramesCloseOnlyTheirConnection sends malformed input on raw connections: each such
// connection is closed, and a well-behaved client (ApiVersions + produce) keeps working during
// and after.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	clProduceN(t, ctx, b.Addr(), "frames", 1, 1, "warmup")
	good := newClient(t, b.Addr(), kgo.DefaultProduceTopic("frames"))

	// The good client works continuously while the bad input arrives.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var goodErr error
	var goodOps atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if _, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, good); err != nil {
				goodErr = fmt.Errorf("ApiVersions: %w", err)
				return
			}
			if err := good.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("during-%d", i))).FirstErr(); err != nil {
				goodErr = fmt.Errorf("produce: %w", err)
				return
			}
			goodOps.Add(1)
		}
	}()

	joinBody := func() []byte {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = 5
		req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "g", 10000, 10000, "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte("metadata")
		req.Protocols = append(req.Protocols, p)
		return req.AppendTo(nil)
	}()
	rnd := rand.New(rand.NewSource(42))
	randomBytes := func(n int) []byte { b := make([]byte, n); rnd.Read(b); return b }
	randomFrame := func() []byte {
		body := randomBytes(64)
		body[0], body[1] = 0x7f, 0x00 // API key 32512: never valid
		f := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		return append(f, body...)
	}
	fullRandom := randomBytes(256)
	fullRandom[0] = 0x80 // negative size prefix

	badFramesBefore := clMetric(t, b, "muster_bad_frames_total")
	cases := []struct {
		name  string
		input []byte
	}{
		{"oversized size prefix", append([]byte{0x7f, 0xff, 0xff, 0xff}, randomBytes(16)...)},
		{"negative size prefix", []byte{0xff, 0xff, 0xff, 0xf0, 1, 2, 3}},
		{"unknown API key", clRawRequest(9999, 0, false, nil)},
		{"unsupported version", clRawRequest(3, 99, false, nil)},
		{"JoinGroup v0 (below the accepted range)", clRawRequest(11, 0, false, nil)},
		{"truncated body", clRawRequest(11, 5, false, joinBody[:len(joinBody)/2])},
		{"header shorter than its fields", []byte{0, 0, 0, 3, 0, 18, 0}},
		{"random frame", randomFrame()},
		{"random bytes", fullRandom},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", b.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(tc.input); err != nil {
				t.Fatal(err)
			}
			clExpectClosed(t, c)
		})
	}
	if got := clMetric(t, b, "muster_bad_frames_total") - badFramesBefore; got != int64(len(cases)) {
		t.Errorf("bad frames counted %d, want %d", got, len(cases))
	}

	// ApiVersions with a version the broker does not know gets a v0 answer (KIP-511), and the
	// connection stays usable.
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(clRawRequest(18, 99, true, nil)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("ApiVersions v99: no answer: %v", err)
	}
	resp := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, resp); err != nil {
		t.Fatal(err)
	}
	var av kmsg.ApiVersionsResponse
	if err := av.ReadFrom(resp[4:]); err != nil || av.ErrorCode != 35 || len(av.ApiKeys) == 0 {
		t.Fatalf("ApiVersions v99 answer: err %v code %d keys %d", err, av.ErrorCode, len(av.ApiKeys))
	}

	stop.Store(true)
	wg.Wait()

	// Half a frame, then the client goes away: the server drops the connection quietly (counted
	// with the good client idle, so that its lazily opened connections do not interfere).
	opened := clMetric(t, b, "muster_connections_open")
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		f := clRawRequest(18, 3, true, kmsg.NewPtrApiVersionsRequest().AppendTo(nil))
		c.Write(f[:len(f)/2])
		c.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); clMetric(t, b, "muster_connections_open") > opened; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("half-frame connections not released: %d open, %d before", clMetric(t, b, "muster_connections_open"), opened)
		}
	}

	if goodErr != nil {
		t.Fatalf("good client failed during bad input: %v", goodErr)
	}
	if goodOps.Load() == 0 {
		t.Fatalf("good client made no progress")
	}
	// ... and after, on its existing connections and on a new client.
	if err := good.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatalf("produce after bad input: %v", err)
	}
	fresh := newClient(t, b.Addr(), kgo.DefaultProduceTopic("frames"))
	if _, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, fresh); err != nil {
		t.Fatalf("ApiVersions on a new client: %v", err)
	}
	if err := fresh.ProduceSync(ctx, kgo.StringRecord("fresh")).FirstErr(); err != nil {
		t.Fatalf("produce on a new client: %v", err)
	}
}
