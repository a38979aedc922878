package data

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wireKeys are the API keys the test-only loopback adapter routes to the plane.
var wireKeys = []int16{0, 1, 2, 3, 18, 19, 20, 21, 22, 23, 32, 37, 60}

// serveLoopback is a minimal, test-only Kafka wire adapter over the plane
// (the real server lives in internal/server): it frames requests, decodes
// them with kmsg and encodes the plane's responses.
func serveLoopback(t testing.TB, p *Plane) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-ctx.Done(); c.Close() }()
				serveConn(ctx, p, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func serveConn(ctx context.Context, p *Plane, c net.Conn) {
	r := bufio.NewReader(c)
	var wmu sync.Mutex
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return
		}
		buf := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		key := int16(binary.BigEndian.Uint16(buf))
		version := int16(binary.BigEndian.Uint16(buf[2:]))
		corr := binary.BigEndian.Uint32(buf[4:])
		cidLen := int16(binary.BigEndian.Uint16(buf[8:]))
		body := buf[10:]
		if cidLen > 0 {
			body = body[cidLen:]
		}
		req := kmsg.RequestForKey(key)
		if req == nil {
			return
		}
		req.SetVersion(version)
		if req.IsFlexible() && key != 18 || key == 18 && version >= 3 {
			n, used := binary.Uvarint(body) // request header tagged fields
			body = body[used:]
			for ; n > 0; n-- {
				_, u1 := binary.Uvarint(body)
				l, u2 := binary.Uvarint(body[u1:])
				body = body[u1+u2+int(l):]
			}
		}
		if err := req.ReadFrom(body); err != nil {
			return
		}
		// Answer concurrently (Fetch may long-poll); kgo matches by correlation ID.
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			resp := dispatch(ctx, p, req)
			if resp == nil {
				return
			}
			out := make([]byte, 4, 64)
			out = binary.BigEndian.AppendUint32(out, corr)
			if resp.IsFlexible() && key != 18 {
				out = append(out, 0)
			}
			out = resp.AppendTo(out)
			binary.BigEndian.PutUint32(out, uint32(len(out)-4))
			wmu.Lock()
			c.Write(out)
			wmu.Unlock()
		}()
	}
}

func dispatch(ctx context.Context, p *Plane, req kmsg.Request) kmsg.Response {
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		if resp := p.Produce(ctx, r); resp != nil {
			return resp
		}
		return nil
	case *kmsg.FetchRequest:
		return p.Fetch(ctx, r)
	case *kmsg.ListOffsetsRequest:
		return p.ListOffsets(ctx, r)
	case *kmsg.MetadataRequest:
		return p.Metadata(ctx, r)
	case *kmsg.CreateTopicsRequest:
		return p.CreateTopics(ctx, r)
	case *kmsg.DeleteTopicsRequest:
		return p.DeleteTopics(ctx, r)
	case *kmsg.DeleteRecordsRequest:
		return p.DeleteRecords(ctx, r)
	case *kmsg.InitProducerIDRequest:
		return p.InitProducerID(ctx, r)
	case *kmsg.OffsetForLeaderEpochRequest:
		return p.OffsetForLeaderEpoch(ctx, r)
	case *kmsg.DescribeConfigsRequest:
		return p.DescribeConfigs(ctx, r)
	case *kmsg.CreatePartitionsRequest:
		return p.CreatePartitions(ctx, r)
	case *kmsg.DescribeClusterRequest:
		return p.DescribeCluster(ctx, r)
	case *kmsg.ApiVersionsRequest:
		resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
		for _, k := range wireKeys {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MaxVersion = k, kmsg.RequestForKey(k).MaxVersion()
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
		return resp
	}
	return nil
}

// TestKgoProduceConsume runs a real franz-go idempotent producer and a
// direct (group-less) consumer against the plane over loopback.
func TestKgoProduceConsume(t *testing.T) {
	e := newEnv(t)
	addr := serveLoopback(t, e.p)
	host, port, _ := net.SplitHostPort(addr)
	var portN int32
	fmt.Sscan(port, &portN)
	// Advertise the listener (set before any client connects).
	e.p.cfg.AdvertisedHost, e.p.cfg.AdvertisedPort = host, portN

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)
	if _, err := admin.CreateTopic(ctx, 3, 1, nil, "e2e"); err != nil {
		t.Fatal(err)
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("e2e"), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const n = 300
	for i := 0; i < n; i++ {
		prod.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprint(i))}, func(r *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("e2e"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := map[string]bool{}
	nextOffset := map[int32]int64{}
	for len(seen) < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("timed out with %d/%d records", len(seen), n)
		}
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != nextOffset[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, nextOffset[r.Partition])
			}
			nextOffset[r.Partition]++
			seen[string(r.Value)] = true
		})
	}

	// kadm offsets agree with the plane.
	ends, err := admin.ListEndOffsets(ctx, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != n {
		t.Fatalf("end offsets sum %d, want %d", total, n)
	}
	cfgs, err := admin.DescribeTopicConfigs(ctx, "e2e")
	if err != nil || len(cfgs) != 1 || cfgs[0].Err != nil || len(cfgs[0].Configs) == 0 {
		t.Fatalf("describe configs: %v %+v", err, cfgs)
	}
}
