package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// commitRaw sends one OffsetCommit of a group outside any generation (generation -1).
func commitRaw(t *testing.T, rc *testutil.RawConn, version int16, group string, topics ...kmsg.OffsetCommitRequestTopic) *kmsg.OffsetCommitResponse {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = version, group, -1
	req.Topics = topics
	return rawDo[*kmsg.OffsetCommitResponse](t, rc, req)
}

func commitTopic(name string, id [16]byte, offsets map[int32]int64) kmsg.OffsetCommitRequestTopic {
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = name, id
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, o
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// fetchRaw sends one OffsetFetch v8+ for one group (topics nil = every offset).
func fetchRaw(t *testing.T, rc *testutil.RawConn, version int16, group string, topics []kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroup {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = version
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group, g.Topics = group, topics
	req.Groups = append(req.Groups, g)
	resp := rawDo[*kmsg.OffsetFetchResponse](t, rc, req)
	if len(resp.Groups) != 1 {
		t.Fatalf("OffsetFetch v%d: %d groups", version, len(resp.Groups))
	}
	return resp.Groups[0]
}

// errCode is err's code (0 for nil).
func errCode(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}

// TestOffsetCommitFetchByTopicID: OffsetCommit v10 and OffsetFetch v10 (Kafka 4.2,
// KAFKA-14690/KAFKA-14691) name topics by id. Offsets committed by name are read by id and the
// other way round (they are the same offsets); an unknown id answers UNKNOWN_TOPIC_ID, a
// partition past the partition count UNKNOWN_TOPIC_OR_PARTITION; responses carry the ids;
// fetching every offset names each topic by its id, and a deleted topic's offsets are not
// returned by id. A real franz-go consumer group (which negotiates v10) commits and resumes.
func TestOffsetCommitFetchByTopicID(t *testing.T) {
	b := testutil.Start(t)
	rc := dialRaw(t, b.Addr())
	cr := kmsg.NewPtrCreateTopicsRequest()
	cr.Version = 7
	for _, n := range []struct {
		name  string
		parts int32
	}{{"by-id-a", 3}, {"by-id-b", 1}} {
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = n.name, n.parts, 1
		cr.Topics = append(cr.Topics, ct)
	}
	created := rawDo[*kmsg.CreateTopicsResponse](t, rc, cr)
	idA, idB := created.Topics[0].TopicID, created.Topics[1].TopicID
	unknownID := [16]byte{0xde, 0xad}
	const g = "by-id-group"

	// Commit by name (v9), read by id (v10).
	if r := commitRaw(t, rc, 9, g, commitTopic("by-id-a", [16]byte{}, map[int32]int64{0: 5})); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit by name: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	got := fetchRaw(t, rc, 10, g, []kmsg.OffsetFetchRequestGroupTopic{{TopicID: idA, Partitions: []int32{0, 1}}})
	if got.ErrorCode != 0 || len(got.Topics) != 1 || got.Topics[0].TopicID != idA ||
		got.Topics[0].Partitions[0].Offset != 5 || got.Topics[0].Partitions[1].Offset != -1 {
		t.Fatalf("fetch by id after commit by name: %+v", got)
	}

	// Commit by id (v10): a known id, a partition past the count, an unknown id.
	r := commitRaw(t, rc, 10, g,
		commitTopic("", idA, map[int32]int64{1: 7}),
		commitTopic("", idA, map[int32]int64{5: 1}),
		commitTopic("", unknownID, map[int32]int64{0: 1}),
		commitTopic("", idB, map[int32]int64{0: 3}))
	want := []struct {
		id   [16]byte
		code *kerr.Error
	}{{idA, nil}, {idA, kerr.UnknownTopicOrPartition}, {unknownID, kerr.UnknownTopicID}, {idB, nil}}
	for i, w := range want {
		rt := r.Topics[i]
		if rt.TopicID != w.id || rt.Partitions[0].ErrorCode != errCode(w.code) {
			t.Errorf("commit v10 topic %d: id %x error %v, want id %x error %v", i, rt.TopicID, kerr.ErrorForCode(rt.Partitions[0].ErrorCode), w.id, w.code)
		}
	}
	byName := fetchRaw(t, rc, 9, g, []kmsg.OffsetFetchRequestGroupTopic{{Topic: "by-id-a", Partitions: []int32{0, 1, 5}}})
	if ps := byName.Topics[0].Partitions; ps[0].Offset != 5 || ps[1].Offset != 7 || ps[2].Offset != -1 {
		t.Fatalf("fetch by name after commit by id: %+v", ps)
	}

	// Fetch by an unknown id.
	un := fetchRaw(t, rc, 10, g, []kmsg.OffsetFetchRequestGroupTopic{{TopicID: unknownID, Partitions: []int32{0, 1}}})
	if un.ErrorCode != 0 || un.Topics[0].TopicID != unknownID {
		t.Fatalf("fetch unknown id: %+v", un)
	}
	for _, p := range un.Topics[0].Partitions {
		if p.ErrorCode != kerr.UnknownTopicID.Code || p.Offset != -1 {
			t.Errorf("fetch unknown id partition %d: %v offset %d", p.Partition, kerr.ErrorForCode(p.ErrorCode), p.Offset)
		}
	}

	// Fetch everything by id: both topics, named by id.
	all := fetchRaw(t, rc, 10, g, nil)
	ids := map[[16]byte]int{}
	for _, tp := range all.Topics {
		ids[tp.TopicID] = len(tp.Partitions)
	}
	if len(ids) != 2 || ids[idA] != 2 || ids[idB] != 1 {
		t.Fatalf("fetch all by id: %+v", all.Topics)
	}

	// A deleted topic's offsets are not returned by id.
	dr := kmsg.NewPtrDeleteTopicsRequest()
	dr.Version = 6
	dr.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: idB}}
	if resp := rawDo[*kmsg.DeleteTopicsResponse](t, rc, dr); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
	all = fetchRaw(t, rc, 10, g, nil)
	for _, tp := range all.Topics {
		if tp.TopicID == idB || tp.TopicID == ([16]byte{}) {
			t.Fatalf("fetch all by id after deleting by-id-b: %+v", all.Topics)
		}
	}
	gone := fetchRaw(t, rc, 10, g, []kmsg.OffsetFetchRequestGroupTopic{{TopicID: idB, Partitions: []int32{0}}})
	if p := gone.Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicID.Code || p.Offset != -1 {
		t.Fatalf("fetch a deleted topic by id: %+v", p)
	}

	// A franz-go group consumer negotiates v10: it commits by id and a new consumer resumes.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("by-id-a"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := 0; i < 30; i++ {
		if err := prod.ProduceSync(ctx, kgo.StringRecord("r")).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := newClient(t, b.Addr(), kgo.ConsumerGroup("by-id-kgo"), kgo.ConsumeTopics("by-id-a"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	seen := 0
	for seen < 30 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		seen += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("kgo commit: %v", err)
	}
	cons.Close()
	offs, err := kadm.NewClient(newClient(t, b.Addr())).FetchOffsets(ctx, "by-id-kgo")
	if err != nil || offs.Error() != nil {
		t.Fatal(err, offs.Error())
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != 30 {
		t.Fatalf("committed offsets sum to %d, want 30", sum)
	}
	v9 := fetchRaw(t, rc, 9, "by-id-kgo", []kmsg.OffsetFetchRequestGroupTopic{{Topic: "by-id-a", Partitions: []int32{0, 1, 2}}})
	var v9sum int64
	for _, p := range v9.Topics[0].Partitions {
		v9sum += p.Offset
	}
	if v9sum != 30 {
		t.Fatalf("offsets read by name sum to %d, want 30", v9sum)
	}
}
