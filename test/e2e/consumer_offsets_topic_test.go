package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/testutil"
)

const offsetsTopic = "__consumer_offsets"

// offsetsRecord is one record read from __consumer_offsets.
type offsetsRecord struct {
	partition int32
	offset    int64
	key       []byte
	value     []byte // nil: tombstone
}

// readOffsetsTopic consumes __consumer_offsets with a plain franz-go consumer (no group) from the
// given offsets (nil: from the start) until every partition is read up to its high watermark.
func readOffsetsTopic(t *testing.T, ctx context.Context, addr string, from map[int32]int64) ([]offsetsRecord, map[int32]int64) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	ends, err := adm.ListEndOffsets(ctx, offsetsTopic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets: %v %v", err, ends.Error())
	}
	want := map[int32]int64{}
	starts := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		want[o.Partition] = o.Offset
		if at, ok := from[o.Partition]; ok {
			starts[o.Partition] = kgo.NewOffset().At(at)
		} else {
			starts[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	cl := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{offsetsTopic: starts}))
	defer cl.Close()
	next := map[int32]int64{}
	for p, o := range from {
		next[p] = o
	}
	done := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	var out []offsetsRecord
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consuming %s: %v (read %v of %v)", offsetsTopic, err, next, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, offsetsRecord{partition: r.Partition, offset: r.Offset, key: r.Key, value: r.Value})
			next[r.Partition] = r.Offset + 1
		})
	}
	return out, want
}

// flexReader reads Kafka's flexible encoding, enough to check the KIP-848 record schemas.
type flexReader struct {
	b   []byte
	err error
}

func (r *flexReader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *flexReader) int16() int16 { return int16(binary.BigEndian.Uint16(r.take(2))) }
func (r *flexReader) int32() int32 { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *flexReader) uvarint() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}
func (r *flexReader) nullableString() *string {
	n := r.uvarint()
	if n == 0 {
		return nil
	}
	s := string(r.take(n - 1))
	return &s
}
func (r *flexReader) string() string {
	if s := r.nullableString(); s != nil {
		return *s
	}
	r.err = errors.New("null string")
	return ""
}

// TestConsumerOffsetsTopicIsInternal: __consumer_offsets is Kafka's internal topic: listed with
// IsInternal and offsets.topic.num.partitions partitions, never auto-created, and written,
// deleted, resized and trimmed by its coordinator only (INVALID_TOPIC_EXCEPTION for a client's
// Produce and DeleteRecords, as Kafka's ReplicaManager answers; DeleteTopics and
// CreatePartitions refused too). The other internal topics are never created by a client.
func TestConsumerOffsetsTopicIsInternal(t *testing.T) {
	b := testutil.Start(t, "offsets.topic.num.partitions=6")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc := dialRaw(t, b.Addr())

	mr := kmsg.NewPtrMetadataRequest()
	mr.Version = 12
	all := rawDo[*kmsg.MetadataResponse](t, rc, mr)
	var found *kmsg.MetadataResponseTopic
	for i, tp := range all.Topics {
		if tp.Topic != nil && *tp.Topic == offsetsTopic {
			found = &all.Topics[i]
		}
	}
	if found == nil || !found.IsInternal || len(found.Partitions) != 6 || found.ErrorCode != 0 {
		t.Fatalf("%s in Metadata: %+v", offsetsTopic, found)
	}
	mr.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(offsetsTopic)}, {Topic: kmsg.StringPtr("__transaction_state")}}
	mr.AllowAutoTopicCreation = true
	named := rawDo[*kmsg.MetadataResponse](t, rc, mr)
	if tp := named.Topics[0]; !tp.IsInternal || len(tp.Partitions) != 6 {
		t.Errorf("%s by name: %+v", offsetsTopic, tp)
	}
	if tp := named.Topics[1]; tp.ErrorCode != kerr.UnknownTopicOrPartition.Code || !tp.IsInternal {
		t.Errorf("__transaction_state with auto-creation allowed: %v internal %v, want UNKNOWN_TOPIC_OR_PARTITION, not created", kerr.ErrorForCode(tp.ErrorCode), tp.IsInternal)
	}

	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(offsetsTopic), kgo.RecordRetries(1))
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("produce to %s: %v, want INVALID_TOPIC_EXCEPTION", offsetsTopic, err)
	}

	adm := kadm.NewClient(newClient(t, b.Addr()))
	if resp, err := adm.DeleteTopics(ctx, offsetsTopic); err != nil || !errors.Is(resp[offsetsTopic].Err, kerr.InvalidTopicException) {
		t.Errorf("delete %s: %v %+v", offsetsTopic, err, resp)
	}
	if resp, err := adm.CreatePartitions(ctx, 2, offsetsTopic); err != nil || resp[offsetsTopic].Err == nil {
		t.Errorf("create partitions of %s: %v %+v", offsetsTopic, err, resp)
	}
	var dr kadm.Offsets
	dr.Add(kadm.Offset{Topic: offsetsTopic, Partition: 0, At: 0})
	if resp, err := adm.DeleteRecords(ctx, dr); err != nil || !errors.Is(resp[offsetsTopic][0].Err, kerr.InvalidTopicException) {
		t.Errorf("delete records of %s: %v %+v", offsetsTopic, err, resp)
	}
	if resp, err := adm.CreateTopic(ctx, 1, 1, nil, "__transaction_state"); err == nil && resp.Err == nil {
		t.Errorf("a client created __transaction_state")
	}
	if resp, err := adm.CreateTopic(ctx, 1, 1, nil, offsetsTopic); err == nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		t.Errorf("create %s: %v", offsetsTopic, resp.Err)
	}
	md := rawDo[*kmsg.MetadataResponse](t, rc, kmsg.NewPtrMetadataRequest())
	for _, tp := range md.Topics {
		if tp.Topic != nil && *tp.Topic == offsetsTopic && len(tp.Partitions) != 6 {
			t.Errorf("%s has %d partitions after the refused changes", offsetsTopic, len(tp.Partitions))
		}
		if tp.Topic != nil && *tp.Topic == "__transaction_state" {
			t.Errorf("__transaction_state exists")
		}
	}
}

// TestConsumerOffsetsTopicReadable: a real franz-go consumer of __consumer_offsets reads the
// coordinator's records in Kafka's own format, one partition per coordinator shard (the group's
// partitionFor): the commits a classic consumer group made decode with kmsg.OffsetCommitKey and
// kmsg.OffsetCommitValue, its GroupMetadata with kmsg.GroupMetadataKey/Value, and a KIP-848
// group's records with the key and value schemas of Kafka's group coordinator; later commits
// appear after the offsets already read, and the offsets survive a restart (a consumer resumes).
func TestConsumerOffsetsTopicReadable(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("orders"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(n int) {
		for i := 0; i < n; i++ {
			if err := prod.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	consume := func(group string, n int, opts ...kgo.Opt) {
		cl := newClient(t, b.Addr(), append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}, opts...)...)
		for seen := 0; seen < n; {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			seen += fs.NumRecords()
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	produce(30)
	consume("classic-readers", 30)
	consume("kip848-readers", 30, kgo.ServerSideBalancer())

	shards := b.Runtime().Shards()
	recs, ends := readOffsetsTopic(t, ctx, b.Addr(), nil)
	committed := map[string]int64{} // group/topic/partition → last committed offset
	classicMeta, cgEpoch, cgClient := false, int32(-1), ""
	for _, r := range recs {
		if len(r.key) < 2 {
			t.Fatalf("record at %d/%d: key %x", r.partition, r.offset, r.key)
		}
		switch typ := int16(binary.BigEndian.Uint16(r.key)); typ {
		case 0, 1:
			var k kmsg.OffsetCommitKey
			if err := k.ReadFrom(r.key); err != nil {
				t.Fatalf("OffsetCommitKey: %v", err)
			}
			if want := coordinator.ShardFor(k.Group, shards); r.partition != want {
				t.Errorf("group %s's commit in partition %d, want %d (partitionFor)", k.Group, r.partition, want)
			}
			if r.value == nil {
				delete(committed, fmt.Sprintf("%s/%s/%d", k.Group, k.Topic, k.Partition))
				continue
			}
			var v kmsg.OffsetCommitValue
			if err := v.ReadFrom(r.value); err != nil {
				t.Fatalf("OffsetCommitValue: %v", err)
			}
			committed[fmt.Sprintf("%s/%s/%d", k.Group, k.Topic, k.Partition)] = v.Offset
		case 2:
			var k kmsg.GroupMetadataKey
			if err := k.ReadFrom(r.key); err != nil {
				t.Fatalf("GroupMetadataKey: %v", err)
			}
			if k.Group != "classic-readers" || r.value == nil {
				continue
			}
			var v kmsg.GroupMetadataValue
			if err := v.ReadFrom(r.value); err != nil {
				t.Fatalf("GroupMetadataValue: %v", err)
			}
			classicMeta = classicMeta || v.ProtocolType == "consumer"
		case 3: // ConsumerGroupMetadataKey {GroupId}, Value v0 {Epoch, tags}
			kr := &flexReader{b: r.key[2:]}
			g := string(kr.take(int(kr.int16())))
			if g != "kip848-readers" || r.value == nil {
				continue
			}
			vr := &flexReader{b: r.value}
			if ver := vr.int16(); ver != 0 {
				t.Fatalf("ConsumerGroupMetadataValue version %d", ver)
			}
			cgEpoch = vr.int32()
			if vr.err != nil {
				t.Fatalf("ConsumerGroupMetadataValue: %v", vr.err)
			}
		case 5: // ConsumerGroupMemberMetadataKey {GroupId, MemberId}, Value v0 {InstanceId, RackId, ClientId, ...}
			if r.value == nil {
				continue
			}
			vr := &flexReader{b: r.value}
			vr.int16()
			vr.nullableString()
			vr.nullableString()
			cgClient = vr.string()
			if vr.err != nil {
				t.Fatalf("ConsumerGroupMemberMetadataValue: %v", vr.err)
			}
		}
	}
	for _, g := range []string{"classic-readers", "kip848-readers"} {
		var sum int64
		for p := 0; p < 3; p++ {
			sum += committed[fmt.Sprintf("%s/orders/%d", g, p)]
		}
		if sum != 30 {
			t.Errorf("%s: committed offsets read from %s sum to %d, want 30 (%v)", g, offsetsTopic, sum, committed)
		}
	}
	if !classicMeta {
		t.Error("no GroupMetadata record of the classic group")
	}
	if cgEpoch < 1 || cgClient == "" {
		t.Errorf("KIP-848 group records: epoch %d, member client id %q", cgEpoch, cgClient)
	}

	// Resume: new commits come after what was read; the offsets survive a restart.
	produce(30)
	consume("classic-readers", 30)
	b = b.Restart()
	more, _ := readOffsetsTopic(t, ctx, b.Addr(), ends)
	var sum int64
	latest := map[string]int64{}
	for _, r := range more {
		if r.offset < ends[r.partition] {
			t.Fatalf("record at %d/%d before the resume point %d", r.partition, r.offset, ends[r.partition])
		}
		if typ := int16(binary.BigEndian.Uint16(r.key)); typ != 1 || r.value == nil {
			continue
		}
		var k kmsg.OffsetCommitKey
		var v kmsg.OffsetCommitValue
		if k.ReadFrom(r.key) != nil || v.ReadFrom(r.value) != nil {
			t.Fatal("undecodable commit")
		}
		if k.Group == "classic-readers" {
			latest[fmt.Sprint(k.Partition)] = v.Offset
		}
	}
	for _, o := range latest {
		sum += o
	}
	if sum != 60 {
		t.Errorf("commits read after resuming sum to %d, want 60 (%v)", sum, latest)
	}
}
