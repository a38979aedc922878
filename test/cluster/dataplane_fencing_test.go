package cluster_test

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/pgtest"
)

// recordBatch encodes one record of value as a v2 record batch (no producer id).
func recordBatch(value []byte) []byte {
	r := kmsg.NewRecord()
	r.Value = value
	body := r.AppendTo(nil)
	r.Length = int32(len(body) - len(binary.AppendVarint(nil, int64(r.Length))))
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: r.AppendTo(nil)}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// produceRaw sends one Produce v9 (acks=all) of value to partition of topic at node n itself
// and returns the partition's error code and base offset (-1, -1: no answer).
func produceRaw(n *node, topic string, partition int32, value string) (int16, int64) {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, recordBatch([]byte(value))
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := n.raw(req)
	if err != nil {
		return -1, -1
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset
}

// TestClusterPartitionFencingSIGSTOP: the leader of a partition is paused (SIGSTOP) past its
// lease while a franz-go producer keeps producing to the partition; the other node takes the
// partition over with a newer leader epoch. Resumed, the stale leader takes no write: a produce
// sent to it at once is refused (its lease watchdog unloads the partition, or the database
// refuses the stale epoch's batch and it unloads), it names the new leader in Metadata, the
// producer ends on the new leader, and the partition holds every acknowledged record at the
// offset it was acknowledged at and nothing the stale leader was sent.
func TestClusterPartitionFencingSIGSTOP(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := newNode(t, url, 1, "cluster.lease.ttl.ms=2000")
	b := newNode(t, url, 2, "cluster.lease.ttl.ms=2000")
	a.start()
	b.start()
	a.createTopic("f", 2)
	// The partitions spread over both nodes: find the one node 1 leads.
	part := int32(-1)
	for deadline := time.Now().Add(20 * time.Second); part < 0; time.Sleep(50 * time.Millisecond) {
		for i, p := range leadersOf(b, "f") {
			if p.code == 0 && p.leader == a.id {
				part = int32(i)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1 leads no partition of f: %+v", leadersOf(b, "f"))
		}
	}
	before := leadersOf(b, "f")[part]
	if code, _ := produceRaw(a, "f", part, "at-the-leader"); code != 0 {
		t.Fatalf("produce at the leader: error %d", code)
	}

	p := startPartitionProducer(t, []string{a.addr, b.addr}, "f", part)
	p.waitProgress(t, 100, 20*time.Second)

	a.signal(syscall.SIGSTOP)
	paused := time.Now()
	var after partitionLeader
	for {
		if l := leadersOf(b, "f"); len(l) > int(part) && l[part].leader == b.id && l[part].code == 0 {
			after = l[part]
			break
		}
		if time.Since(paused) > 10*time.Second {
			t.Fatalf("node 2 did not take partition %d over", part)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("node 2 leads partition %d at epoch %d (node 1 had epoch %d) %v after node 1 was paused", part, after.epoch, before.epoch, time.Since(paused).Round(time.Millisecond))
	if after.epoch <= before.epoch {
		t.Fatalf("new leader epoch %d not above %d", after.epoch, before.epoch)
	}
	// The lease is named in Metadata as soon as it is taken; the partition takes writes once it
	// has loaded (NOT_LEADER_OR_FOLLOWER meanwhile).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, _ := produceRaw(b, "f", part, "at-the-new-leader")
		if code == 0 {
			break
		}
		if code != 6 || time.Now().After(deadline) {
			t.Fatalf("produce at the new leader: error %d", code)
		}
	}

	a.signal(syscall.SIGCONT)
	if code, off := produceRaw(a, "f", part, "at-the-stale-leader"); code == 0 {
		t.Fatalf("the resumed stale leader acknowledged a produce at offset %d", off)
	} else {
		t.Logf("resumed stale leader answered error %d", code)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if l := leadersOf(a, "f"); len(l) > int(part) && l[part].leader == b.id && l[part].epoch == after.epoch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1 never named node 2 the leader of partition %d: %+v", part, leadersOf(a, "f"))
		}
	}
	a.waitReady(20 * time.Second)
	t.Logf("node 1: lease losses %v, fencing refusals %v", a.metric("muster_cluster_lease_losses_total"), a.metric("muster_cluster_fencing_refusals_total"))
	p.waitProgress(t, 100, 20*time.Second)
	p.stop(t)

	// The partition as the new leader serves it: every acknowledged record where it was
	// acknowledged, the stale leader's never.
	cl, err := kgo.NewClient(append(clientOpts([]string{a.addr, b.addr}),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"f": {part: kgo.NewOffset().AtStart()}}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := newLedger()
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		p.mu.Lock()
		missing := 0
		for v := range p.acked {
			if !seen[v] {
				missing++
			}
		}
		p.mu.Unlock()
		if missing == 0 && seen["at-the-new-leader"] {
			break
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d acknowledged records never read", missing)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got.note(pos{r.Partition, r.Offset}, string(r.Value))
			seen[string(r.Value)] = true
		})
	}
	if seen["at-the-stale-leader"] {
		t.Fatal("the stale leader's record is in the log")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for v, at := range p.acked {
		if got.at[at] != v {
			t.Errorf("offset %d holds %q, %q was acknowledged there", at.offset, got.at[at], v)
		}
	}
	t.Logf("%d acknowledged records read back; producer errors seen %v", len(p.acked), p.errs)
}
