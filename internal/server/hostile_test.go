package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// canary is a well-behaved client running beside every attack: it produces with acks=all and
// commits the produced offset for its group, in a loop, and counts rounds and errors.
type canary struct {
	rounds atomic.Int64
	mu     sync.Mutex
	errs   []error
	stop   chan struct{}
	done   chan struct{}
}

func startCanary(t *testing.T, addr string) *canary {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("canary"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "canary"); err != nil {
		t.Fatal(err)
	}
	c := &canary{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cl.Close()
		for i := 0; ; i++ {
			select {
			case <-c.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := cl.ProduceSync(ctx, kgo.StringRecord("x")).First()
			if err == nil {
				var os kadm.Offsets
				os.Add(kadm.Offset{Topic: "canary", Partition: 0, At: r.Offset + 1, LeaderEpoch: -1})
				var resp kadm.OffsetResponses
				if resp, err = adm.CommitOffsets(ctx, "canary-group", os); err == nil {
					err = resp.Error()
				}
			}
			if err == nil {
				var fetched kadm.OffsetResponses
				if fetched, err = adm.FetchOffsets(ctx, "canary-group"); err == nil {
					if o, ok := fetched.Lookup("canary", 0); !ok || o.At != r.Offset+1 {
						err = errors.New("committed offset not read back")
					}
				}
			}
			cancel()
			if err != nil {
				c.mu.Lock()
				c.errs = append(c.errs, err)
				c.mu.Unlock()
				continue
			}
			c.rounds.Add(1)
		}
	}()
	t.Cleanup(func() { close(c.stop); <-c.done })
	return c
}

// healthy waits for the canary to complete a few more rounds and fails on any canary error.
func (c *canary) healthy(t *testing.T, what string) {
	t.Helper()
	start := c.rounds.Load()
	deadline := time.Now().Add(20 * time.Second)
	for c.rounds.Load() < start+5 {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: canary made %d rounds in 20s", what, c.rounds.Load()-start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) > 0 {
		t.Fatalf("after %s: canary errors: %v", what, c.errs)
	}
}

// frame builds a request frame: header v1 (v2 when flexible: an empty or given tag section) and
// body bytes.
func frame(key, version int16, corr int32, clientID string, flexTags []byte, body []byte) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if flexTags != nil {
		b = append(b, flexTags...)
	}
	b = append(b, body...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expectClosed reads until the server closes c (any bytes before are ignored).
func expectClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: server did not close the connection", what)
	}
}

// readResponse reads one response frame and checks its correlation id.
func readResponse(t *testing.T, c net.Conn, corr int32) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading response: %v", err)
	}
	if got := int32(binary.BigEndian.Uint32(b)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	return b[4:]
}

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHostileInput runs handcrafted bad input against a real in-process broker, each attack on
// its own connection while a canary produces (acks=all) and commits offsets; the canary must
// stay error-free and keep progressing after every attack.
func TestHostileInput(t *testing.T) {
	b := testutil.Start(t)
	addr := b.Addr()
	can := startCanary(t, addr)
	can.healthy(t, "start")

	closes := []struct {
		name  string
		frame []byte
	}{
		// Metadata v1 with a topics array claiming 2^31-1 entries.
		{"huge array length", frame(3, 1, 1, "x", nil, []byte{0x7f, 0xff, 0xff, 0xff, 0, 1, 'a'})},
		// OffsetCommit v2 whose group id claims 32767 bytes.
		{"string longer than the frame", frame(8, 2, 1, "x", nil, []byte{0x7f, 0xff, 'g'})},
		// Header client id longer than the frame.
		{"client id longer than the frame", append(binary.BigEndian.AppendUint32(nil, 12), 0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 'a', 'b')},
		// JoinGroup v6 (flexible) with a compact array length of 2^32-2.
		{"huge compact array", frame(11, 6, 1, "x", []byte{0}, []byte{2, 'g', 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 'c', 0xff, 0xff, 0xff, 0xff, 0x0f})},
		// A tagged-field section whose field claims more bytes than remain (header v2).
		{"tagged field longer than the frame", frame(68, 0, 1, "x", []byte{1, 0, 0x7f}, nil)},
		// ConsumerGroupHeartbeat v0 (flexible) whose group id claims 2^31 bytes (compact string).
		{"compact string longer than the frame", frame(68, 0, 1, "x", []byte{0}, []byte{0x80, 0x80, 0x80, 0x80, 0x08, 'g'})},
		// StreamsGroupHeartbeat v0 with a body that stops in the middle of a field.
		{"body truncated mid-field", frame(88, 0, 1, "x", []byte{0}, []byte{2, 'g', 3, 'm'})},
		// A varint that never terminates in a tag section.
		{"unterminated varint", frame(68, 0, 1, "x", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, nil)},
		{"unknown API key", frame(999, 0, 1, "x", nil, nil)},
		{"version above the supported range", frame(3, 99, 1, "x", nil, nil)},
		{"version below the supported range", frame(0, 0, 1, "x", nil, nil)},
		{"negative version", frame(3, -1, 1, "x", nil, nil)},
		{"negative frame size", []byte{0xff, 0xff, 0xff, 0xfe}},
		{"frame size above socket.request.max.bytes", []byte{0x7f, 0xff, 0xff, 0xff, 0}},
		{"frame shorter than a header", append(binary.BigEndian.AppendUint32(nil, 3), 0, 3, 0)},
	}
	for _, a := range closes {
		c := dial(t, addr)
		if _, err := c.Write(a.frame); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c, a.name)
		can.healthy(t, a.name)
	}

	t.Run("negative array lengths decode as empty", func(t *testing.T) {
		// Metadata v1 topics length -1 means null (all topics); Kafka answers it.
		c := dial(t, addr)
		c.Write(frame(3, 1, 5, "x", nil, []byte{0xff, 0xff, 0xff, 0xff}))
		var resp kmsg.MetadataResponse
		resp.Version = 1
		if err := resp.ReadFrom(readResponse(t, c, 5)); err != nil {
			t.Fatal(err)
		}
		// Fetch v4 with a -2 topics length and trailing garbage: kmsg reads a negative length
		// of a non-nullable array as empty and ignores trailing bytes (Kafka would reject the
		// length); the request is answered with an empty fetch, nothing else happens.
		c.Write(frame(1, 4, 6, "x", nil, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xfe, 9, 9, 9}))
		var fr kmsg.FetchResponse
		fr.Version = 4
		if err := fr.ReadFrom(readResponse(t, c, 6)); err != nil || len(fr.Topics) != 0 {
			t.Fatalf("fetch with a negative topics length: err %v, %d topics", err, len(fr.Topics))
		}
		can.healthy(t, "negative lengths")
	})

	t.Run("unknown tagged fields are ignored", func(t *testing.T) {
		// ApiVersions v3 with unknown tags in the header (tag 7) and in the body (tag 9).
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "t", "1"
		req.UnknownTags.Set(9, []byte("body tag"))
		c := dial(t, addr)
		c.Write(frame(18, 3, 6, "x", []byte{1, 7, 3, 'a', 'b', 'c'}, req.AppendTo(nil)))
		var resp kmsg.ApiVersionsResponse
		resp.Version = 3
		if err := resp.ReadFrom(readResponse(t, c, 6)); err != nil || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Fatalf("ApiVersions with unknown tags: err %v code %d keys %d", err, resp.ErrorCode, len(resp.ApiKeys))
		}
		can.healthy(t, "unknown tags")
	})

	t.Run("ApiVersions of an unknown version answers v0 UNSUPPORTED_VERSION", func(t *testing.T) {
		c := dial(t, addr)
		c.Write(frame(18, 77, 8, "x", []byte{0}, []byte{1, 2, 3}))
		var resp kmsg.ApiVersionsResponse
		if err := resp.ReadFrom(readResponse(t, c, 8)); err != nil || resp.ErrorCode != kerr.UnsupportedVersion.Code {
			t.Fatalf("err %v code %d", err, resp.ErrorCode)
		}
		can.healthy(t, "ApiVersions v77")
	})

	t.Run("half frames that stall", func(t *testing.T) {
		before := heapInuse()
		const n = 100
		for i := 0; i < n; i++ {
			c := dial(t, addr)
			// Announce a 100 MB frame (the default limit) and send 10 bytes of it.
			c.Write(append(binary.BigEndian.AppendUint32(nil, 100<<20), 0, 3, 0, 1, 0, 0, 0, 1, 0, 0))
		}
		time.Sleep(200 * time.Millisecond)
		can.healthy(t, "stalled half frames")
		grow := int64(heapInuse()) - int64(before)
		t.Logf("%d stalled 100 MB half-frames: heap grew %d KiB", n, grow>>10)
		if grow > 64<<20 {
			t.Fatalf("heap grew %d MiB for %d stalled connections", grow>>20, n)
		}
	})

	t.Run("client that never reads responses", func(t *testing.T) {
		// A 256-partition topic makes each all-topics Metadata response about 8 KB, so the
		// kernel's socket buffers (up to ~36 MB on loopback here) fill after a few thousand.
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := kadm.NewClient(cl).CreateTopic(ctx, 256, 1, nil, "wide"); err != nil {
			t.Fatal(err)
		}
		before := heapInuse()
		c := dial(t, addr)
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 1
		// A 1 KB client id: the kernel buffers hold tens of MB of small requests.
		one := frame(3, 1, 1, string(make([]byte, 1000)), nil, req.AppendTo(nil))
		var burst []byte
		for i := 0; i < 500; i++ {
			burst = append(burst, one...)
		}
		sent, blocked := 0, false
		for i := 0; i < 200; i++ { // at most 100k requests (100 MB)
			c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
			n, err := c.Write(burst)
			sent += n
			if err != nil {
				blocked = true
				break
			}
		}
		can.healthy(t, "never-reading client")
		grow := int64(heapInuse()) - int64(before)
		t.Logf("never-reading client: server stopped reading after %d requests; heap grew %d KiB", sent/len(one), grow>>10)
		if !blocked {
			t.Fatalf("server kept reading %d requests from a client that never reads", sent/len(one))
		}
		if grow > 64<<20 {
			t.Fatalf("heap grew %d MiB for one never-reading client", grow>>20)
		}
	})

	t.Run("1000 idle connections", func(t *testing.T) {
		before := heapInuse()
		for i := 0; i < 1000; i++ {
			dial(t, addr)
		}
		time.Sleep(200 * time.Millisecond)
		can.healthy(t, "1000 idle connections")
		grow := int64(heapInuse()) - int64(before)
		t.Logf("1000 idle connections: heap grew %d KiB (%d B each)", grow>>10, grow/1000)
		if grow > 32<<20 {
			t.Fatalf("1000 idle connections cost %d MiB of heap", grow>>20)
		}
	})
}

// TestPipelinedFetchesNeverRead: a client pipelines 64 Fetch requests for 10 MB each and never
// reads. Each Fetch's possible response size counts against the connection's in-flight bytes
// (20 MB here), so the server computes only a few of them: without that it held 64 × 10 MB.
func TestPipelinedFetchesNeverRead(t *testing.T) {
	const inflight = 20 << 20
	b := testutil.Start(t, "muster.connection.max.inflight.bytes=20971520")
	addr := b.Addr()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("big"),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "big"); err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 512<<10)
	for i := 0; i < 20; i++ {
		for j := range val {
			val[j] = byte(i*31 + j*7)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: val}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	can := startCanary(t, addr)
	can.healthy(t, "start")
	before := heapInuse()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 4
	req.ReplicaID, req.MaxBytes = -1, 50<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "big"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 50 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	one := frame(1, 4, 1, "x", nil, req.AppendTo(nil))
	c := dial(t, addr)
	for i := 0; i < 64; i++ {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(one); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	can.healthy(t, "pipelined fetches")
	grow := int64(heapInuse()) - int64(before)
	t.Logf("64 pipelined 10 MB fetches, never read (in-flight limit 20 MB): heap grew %d MiB", grow>>20)
	if grow > 6*inflight {
		t.Fatalf("heap grew %d MiB for one client's unread fetches", grow>>20)
	}
}
