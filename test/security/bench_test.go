package security

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"
)

// Benchmarks (not tests): commit and heartbeat throughput over SASL_SSL (SCRAM-SHA-256) and
// PLAINTEXT on one broker, and the rate of SCRAM connection set-ups. Run with
//
//	go test ./test/security -run '^$' -bench . -benchtime 5s
//
// Each op is one OffsetCommit (or Heartbeat) answered; benchConns connections run in parallel.

const benchConns = 16

// scramLogin authenticates r with SCRAM-SHA-256 as alice; c caches the salted password (as a
// real client's does), so the server's cost dominates.
func scramLogin(b testing.TB, r *rawConn, c *scram.Client) {
	r.mustDo(handshake(1, "SCRAM-SHA-256"))
	conv := c.NewConversation()
	first, _ := conv.Step("")
	sf := r.mustDo(authenticate(2, []byte(first))).(*kmsg.SASLAuthenticateResponse)
	final, err := conv.Step(string(sf.SASLAuthBytes))
	if err != nil {
		b.Fatal(err)
	}
	if resp := r.mustDo(authenticate(2, []byte(final))).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
		b.Fatalf("SCRAM login failed: %d", resp.ErrorCode)
	}
}

func benchConnsFor(b *testing.B, sb *secBroker, listener string) []*rawConn {
	sc, _ := scram.SHA256.NewClient("alice", "alice-secret", "")
	var out []*rawConn
	for i := 0; i < benchConns; i++ {
		var r *rawConn
		if listener == "SASL_SSL" {
			r = dialRaw(b, sb.SASLSSL, sb.PKI.ClientTLS())
			scramLogin(b, r, sc)
		} else {
			r = dialRaw(b, sb.Plaintext, nil)
		}
		out = append(out, r)
	}
	return out
}

// runParallel spreads b.N ops over the connections.
func runParallel(b *testing.B, conns []*rawConn, op func(i int, r *rawConn)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i, r := range conns {
		wg.Add(1)
		go func(i int, r *rawConn) {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				op(i, r)
			}
		}(i, r)
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

func BenchmarkCommit(b *testing.B) {
	sb := startSecure(b, "super.users=User:admin;User:alice;User:ANONYMOUS")
	sb.createTopic(b, "bench", 8)
	for _, l := range []string{"PLAINTEXT", "SASL_SSL"} {
		b.Run(l, func(b *testing.B) { benchCommit(b, benchConnsFor(b, sb, l), "bench-"+l+"-", "bench") })
	}
}

// benchCommit: each connection commits one partition of topic for its own group (prefix + i).
func benchCommit(b *testing.B, conns []*rawConn, prefix, topic string) {
	runParallel(b, conns, func(i int, r *rawConn) {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 9, fmt.Sprintf("%s%d", prefix, i), -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset = int32(i%8), 42
		rt.Partitions = append(rt.Partitions, p)
		req.Topics = append(req.Topics, rt)
		if resp := r.mustDo(req).(*kmsg.OffsetCommitResponse); resp.Topics[0].Partitions[0].ErrorCode != 0 {
			b.Fatalf("commit: %d", resp.Topics[0].Partitions[0].ErrorCode)
		}
	})
}

// BenchmarkHeartbeat: KIP-848 ConsumerGroupHeartbeat, one member per group per connection,
// reporting its assignment once and then heartbeating at its epoch.
func BenchmarkHeartbeat(b *testing.B) {
	sb := startSecure(b, "super.users=User:admin;User:alice;User:ANONYMOUS")
	sb.createTopic(b, "hb", 4)
	for _, l := range []string{"PLAINTEXT", "SASL_SSL"} {
		b.Run(l, func(b *testing.B) { benchHeartbeat(b, benchConnsFor(b, sb, l), "hb-"+l+"-", "hb") })
	}
}

// benchHeartbeat: each connection is one member of its own group (prefix + i) subscribed to
// topic.
func benchHeartbeat(b *testing.B, conns []*rawConn, prefix, topic string) {
	type member struct {
		id    string
		epoch int32
		owned []kmsg.ConsumerGroupHeartbeatRequestTopic
		send  bool
	}
	ms := make([]member, len(conns))
	for i := range ms {
		ms[i].id = fmt.Sprintf("m-%s%d", prefix, i)
	}
	runParallel(b, conns, func(i int, r *rawConn) {
		m := &ms[i]
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = fmt.Sprintf("%s%d", prefix, i), m.id, m.epoch, 60000
		if m.epoch == 0 {
			req.SubscribedTopicNames, req.Topics = []string{topic}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		} else if m.send {
			req.Topics = m.owned
		}
		resp := r.mustDo(req).(*kmsg.ConsumerGroupHeartbeatResponse)
		if resp.ErrorCode != 0 {
			b.Fatalf("heartbeat: %d", resp.ErrorCode)
		}
		m.send = false
		if a := resp.Assignment; a != nil {
			m.owned = m.owned[:0]
			for _, t := range a.Topics {
				rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
				rt.TopicID, rt.Partitions = t.TopicID, t.Partitions
				m.owned = append(m.owned, rt)
			}
			m.send = true
		}
		if resp.MemberID != nil && *resp.MemberID != "" {
			m.id = *resp.MemberID
		}
		m.epoch = resp.MemberEpoch
	})
}

// BenchmarkSCRAMConnect: new connections per second that authenticate with SCRAM-SHA-256
// (SASL_PLAINTEXT: ApiVersions, SaslHandshake, two SaslAuthenticate, one Metadata), 4 at a time.
func BenchmarkSCRAMConnect(b *testing.B) {
	sb := startSecure(b)
	sc, _ := scram.SHA256.NewClient("alice", "alice-secret", "")
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				r := dialRaw(b, sb.SASLPlaintext, nil)
				r.mustDo(kmsg.NewPtrApiVersionsRequest())
				scramLogin(b, r, sc)
				r.mustDo(metadataReq())
				r.c.Close()
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "conns/s")
}
