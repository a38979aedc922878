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

// AddPartitionsToTxn checks every partition before the coordinator sees any (Kafka's
// KafkaApis.handleAddPartitionsToTxnRequest): from a client (v0–v3) an internal topic is never
// writable (TOPIC_AUTHORIZATION_FAILED, even without an authorizer), an unknown topic or
// partition is UNKNOWN_TOPIC_OR_PARTITION, and then every other partition answers
// OPERATION_NOT_ATTEMPTED; v4+ (brokers) checks existence the same way for verification too.
func TestAddPartitionsToTxnPartitionChecks(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(t, ctx, b.Addr(), "known", 2)
	p := newProber(t, b.Addr())
	id := "tx-add-checks"
	r := p.init(4, &id, 60000, -1, -1)
	codes := func(topics []kmsg.AddPartitionsToTxnResponseTopic) map[string]int16 {
		out := map[string]int16{}
		for _, t := range topics {
			for _, rp := range t.Partitions {
				out[t.Topic+"/"+string(rune('0'+rp.Partition))] = rp.ErrorCode
			}
		}
		return out
	}
	check := func(what string, got, want map[string]int16) {
		t.Helper()
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s = %s, want %s", what, k, errName(got[k]), errName(w))
			}
		}
	}
	notAttempted := kerr.OperationNotAttempted.Code
	for _, internal := range []string{"__consumer_offsets", "__transaction_state"} {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, r.ProducerID, r.ProducerEpoch
		req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: internal, Partitions: []int32{0}}, {Topic: "known", Partitions: []int32{0}}}
		check("v3 "+internal, codes(p.do(req).(*kmsg.AddPartitionsToTxnResponse).Topics),
			map[string]int16{internal + "/0": kerr.TopicAuthorizationFailed.Code, "known/0": notAttempted})
	}

	v4 := func(verifyOnly bool) map[string]int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = 4
		req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: id, ProducerID: r.ProducerID,
			ProducerEpoch: r.ProducerEpoch, VerifyOnly: verifyOnly, Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{
				{Topic: "known", Partitions: []int32{0, 7}}, {Topic: "nope", Partitions: []int32{0}}}}}
		resp := p.do(req).(*kmsg.AddPartitionsToTxnResponse)
		out := map[string]int16{}
		for _, tr := range resp.Transactions {
			for _, t := range tr.Topics {
				for _, rp := range t.Partitions {
					out[t.Topic+"/"+string(rune('0'+rp.Partition))] = rp.ErrorCode
				}
			}
		}
		return out
	}
	unknown := kerr.UnknownTopicOrPartition.Code
	for _, verifyOnly := range []bool{false, true} {
		check("v4", v4(verifyOnly), map[string]int16{"known/0": notAttempted, "known/7": unknown, "nope/0": unknown})
	}
	// Nothing was added.
	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{id}
	if st := p.do(d).(*kmsg.DescribeTransactionsResponse).TransactionStates[0]; st.State != "Empty" || len(st.Topics) != 0 {
		t.Errorf("after refused adds: state %s, topics %+v; want Empty and none", st.State, st.Topics)
	}
}

// ListTransactions knows every state name of Kafka's TransactionState, the transient Dead and
// PrepareEpochFence included (TransactionStateManager.listTransactionStates): they are not
// reported as unknown filters and match no transaction; only other names are unknown.
func TestListTransactionsStateFilterNames(t *testing.T) {
	b := testutil.Start(t)
	p := newProber(t, b.Addr())
	id := "tx-list-states"
	if r := p.init(4, &id, 60000, -1, -1); r.ErrorCode != 0 {
		t.Fatalf("init: %s", errName(r.ErrorCode))
	}
	for _, c := range []struct {
		filters []string
		unknown []string
		n       int
	}{
		{[]string{"Dead"}, nil, 0},
		{[]string{"PrepareEpochFence", "Empty"}, nil, 1},
		{[]string{"Bogus", "empty"}, []string{"Bogus", "empty"}, 0},
	} {
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version, req.StateFilters, req.DurationFilterMillis = 1, c.filters, -1
		resp := p.do(req).(*kmsg.ListTransactionsResponse)
		if resp.ErrorCode != 0 || len(resp.TransactionStates) != c.n || len(resp.UnknownStateFilters) != len(c.unknown) {
			t.Errorf("filters %v: error %s, %d transactions, unknown %v; want %d, unknown %v", c.filters,
				errName(resp.ErrorCode), len(resp.TransactionStates), resp.UnknownStateFilters, c.n, c.unknown)
		}
	}
}
