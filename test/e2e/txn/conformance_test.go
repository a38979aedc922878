package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// txnOffsetCodes sends a TxnOffsetCommit and returns each partition's error code by "topic/p".
func (p *prober) txnOffsetCodes(v int16, id, group string, pid int64, epoch int16, parts map[string][]int32) map[string]int16 {
	p.t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = v, id, group, pid, epoch, -1
	for topic, ps := range parts {
		rt := kmsg.TxnOffsetCommitRequestTopic{Topic: topic}
		for _, part := range ps {
			rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: part, Offset: 1, LeaderEpoch: -1})
		}
		req.Topics = append(req.Topics, rt)
	}
	out := map[string]int16{}
	for _, t := range p.do(req).(*kmsg.TxnOffsetCommitResponse).Topics {
		for _, rp := range t.Partitions {
			out[t.Topic+"/"+string(rune('0'+rp.Partition))] = rp.ErrorCode
		}
	}
	return out
}

// TxnOffsetCommit checks unknown topics and partitions before anything else reaches the group
// coordinator (Kafka's KafkaApis.handleTxnOffsetCommitRequest): they answer
// UNKNOWN_TOPIC_OR_PARTITION whatever the transaction's or the group's state, and the error of
// the rest (the group id, the transaction verification) never overwrites them.
func TestTxnOffsetCommitUnknownTopicFirst(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "known", 1)
	p := newProber(t, b.Addr())
	id := "tx-unknown-topic"
	r := p.init(4, &id, 60000, -1, -1)
	if r.ErrorCode != 0 {
		t.Fatalf("init: %s", errName(r.ErrorCode))
	}
	unknown := kerr.UnknownTopicOrPartition.Code
	check := func(what string, got map[string]int16, want map[string]int16) {
		t.Helper()
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s = %s, want %s", what, k, errName(got[k]), errName(w))
			}
		}
	}
	// No AddOffsetsToTxn: only unknown partitions, so nothing is verified.
	for _, v := range []int16{3, 4} {
		got := p.txnOffsetCodes(v, id, "g", r.ProducerID, r.ProducerEpoch, map[string][]int32{"nope": {0}, "known": {5}})
		check("only unknown", got, map[string]int16{"nope/0": unknown, "known/5": unknown})
		got = p.txnOffsetCodes(v, id, "g", r.ProducerID, r.ProducerEpoch, map[string][]int32{"nope": {0}, "known": {0}})
		want := kerr.InvalidTxnState.Code
		if v >= 4 {
			want = kerr.TransactionAbortable.Code
		}
		check("unknown and not added", got, map[string]int16{"nope/0": unknown, "known/0": want})
	}
	got := p.txnOffsetCodes(3, id, "", r.ProducerID, r.ProducerEpoch, map[string][]int32{"nope": {0}, "known": {0}})
	check("empty group", got, map[string]int16{"nope/0": unknown, "known/0": kerr.InvalidGroupID.Code})
	got = p.txnOffsetCodes(3, id, "", r.ProducerID, r.ProducerEpoch, map[string][]int32{"nope": {0}})
	check("empty group, only unknown", got, map[string]int16{"nope/0": unknown})
	got = p.txnOffsetCodes(3, id, "g", r.ProducerID, r.ProducerEpoch+1, map[string][]int32{"nope": {0}, "known": {0}})
	check("fenced", got, map[string]int16{"nope/0": unknown, "known/0": kerr.InvalidProducerEpoch.Code})
}
