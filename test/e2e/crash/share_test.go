package crash

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/testutil"
)

// TestSIGKILLKeepsShareAcknowledgements: a share group member acquires 30 records and
// acknowledges some (ACCEPT 0–9, RELEASE 10–14, REJECT 15–19), takes the released ones again,
// and muster is killed with SIGKILL. After the restart no accepted or rejected record is
// delivered again, the records acquired at the crash are delivered again with the delivery
// count they had (an acquisition is not durable, Kafka's ShareSnapshot), and the released records
// keep the delivery they had before: their count goes on from 1.
func TestSIGKILLKeepsShareAcknowledgements(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, dir := freeAddr(t), t.TempDir()
	p := startProc(t, addr, dir)
	const topic, group = "share-crash", "share-crash-group"
	cl := newClient(t, addr)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	setEarliest(t, ctx, cl, group)
	for i := 0; i < 30; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte(tds[topic].ID)

	m, err := testutil.NewShareMember(addr, group, "member-one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Join(topic); err != nil {
		t.Fatal(err)
	}
	r, err := m.Fetch(m.FetchRequest(id, []int32{0}, 30, 1000))
	if err != nil || testutil.ShareErrors(r) != "" || len(testutil.Acquired(r)) != 30 {
		t.Fatalf("first fetch: %v %s %v", err, testutil.ShareErrors(r), testutil.Acquired(r))
	}
	types := make([]int8, 20)
	for i := range types {
		switch {
		case i < 10:
			types[i] = coordinator.AckAccept
		case i < 15:
			types[i] = coordinator.AckRelease
		default:
			types[i] = coordinator.AckReject
		}
	}
	ack, err := m.Acknowledge(m.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 19, Types: types})
	if err != nil || ack.ErrorCode != 0 || ack.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("acknowledge: %v %+v", err, ack)
	}
	r, err = m.Fetch(m.FetchRequest(id, []int32{0}, 30, 1000))
	if err != nil || len(testutil.Acquired(r)) != 5 || testutil.Acquired(r)[10] != 2 {
		t.Fatalf("second fetch: %v %v", err, testutil.Acquired(r))
	}

	p.kill()
	m.Conn.Close()
	startProc(t, addr, dir)

	m2, err := testutil.NewShareMember(addr, group, "member-two")
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Conn.Close()
	if _, err := m2.Join(topic); err != nil {
		t.Fatal(err)
	}
	got := map[int64]int16{}
	for deadline := time.Now().Add(10 * time.Second); len(got) < 15 && time.Now().Before(deadline); {
		r, err := m2.Fetch(m2.FetchRequest(id, []int32{0}, 100, 500))
		if err != nil {
			t.Fatal(err)
		}
		for o, c := range testutil.Acquired(r) {
			got[o] = c
		}
	}
	for o := int64(0); o < 30; o++ {
		c, ok := got[o]
		switch {
		case o < 10 || (o >= 15 && o < 20):
			if ok {
				t.Errorf("offset %d (acknowledged before the crash) delivered again", o)
			}
		case o < 15:
			if c != 2 {
				t.Errorf("offset %d (released, then acquired at the crash): delivery count %d, want 2", o, c)
			}
		default:
			if c != 1 {
				t.Errorf("offset %d (acquired at the crash): delivery count %d, want 1", o, c)
			}
		}
	}
	offs, err := kadm.NewClient(newClient(t, addr)).DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if so := offs[group].Offsets[topic][0].StartOffset; so != 10 {
		t.Errorf("share-partition start offset after the restart: %d, want 10", so)
	}
}

func setEarliest(t *testing.T, ctx context.Context, cl *kgo.Client, group string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kadm.StringPtr("earliest")
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("set share.auto.offset.reset: %v %+v", err, resp)
	}
}

// TestSIGKILLShareConsumerNeverRedeliversAccepted: a kgo share consumer accepts every record it
// polls and flushes its acknowledgements; muster is killed with SIGKILL mid-stream. After the
// restart a new consumer of the group never gets a record whose acceptance was confirmed, and
// gets every other record.
func TestSIGKILLShareConsumerNeverRedeliversAccepted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, dir := freeAddr(t), t.TempDir()
	p := startProc(t, addr, dir)
	const topic, group, n = "share-crash-kgo", "share-crash-kgo-group", 2000
	cl := newClient(t, addr)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	setEarliest(t, ctx, cl, group)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var (
		mu      sync.Mutex
		ackErrs int
	)
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.ShareMaxRecords(50), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
			if rs.Error() != nil {
				mu.Lock()
				ackErrs++
				mu.Unlock()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	confirmed := map[string]bool{}
	for len(confirmed) < n/2 {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		recs := cons.PollFetches(pctx).Records()
		pcancel()
		for _, r := range recs {
			r.Ack(kgo.AckAccept)
		}
		mu.Lock()
		before := ackErrs
		mu.Unlock()
		if err := cons.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		ok := ackErrs == before
		mu.Unlock()
		if ok {
			for _, r := range recs {
				confirmed[string(r.Value)] = true
			}
		}
	}
	// Records polled but not acknowledged yet are in flight when muster dies.
	pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	inflight := len(cons.PollFetches(pctx).Records())
	pcancel()
	p.kill()
	go cons.Close()
	startProc(t, addr, dir)

	after, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	seen := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); len(seen)+len(confirmed) < n && time.Now().Before(deadline); {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		for _, r := range after.PollFetches(pctx).Records() {
			if confirmed[string(r.Value)] {
				t.Fatalf("record %s, accepted before the crash, delivered again (delivery count %d)", r.Value, r.DeliveryCount())
			}
			seen[string(r.Value)] = true
		}
		pcancel()
	}
	if len(seen)+len(confirmed) != n {
		t.Fatalf("after the restart: %d records delivered, %d confirmed before; want %d in all", len(seen), len(confirmed), n)
	}
	t.Logf("%d records accepted before the crash (%d more in flight), %d delivered after it", len(confirmed), inflight, len(seen))
}
