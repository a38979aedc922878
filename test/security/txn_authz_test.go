package security

import (
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAuthorizeTransactionAPIs: the transaction APIs check what KafkaApis checks, in its order
// and before anything that would reveal whether a transactional id exists: InitProducerId,
// AddOffsetsToTxn, EndTxn and TxnOffsetCommit need WRITE on the transactional id (then READ on
// the group, and READ per topic for TxnOffsetCommit); AddPartitionsToTxn v0-v3 WRITE on the id
// then WRITE per topic (the other partitions OPERATION_NOT_ATTEMPTED), v4+ CLUSTER_ACTION as
// WriteTxnMarkers; DescribeTransactions DESCRIBE per id; ListTransactions lists only the ids the
// caller may DESCRIBE; DescribeProducers READ per topic.
func TestAuthorizeTransactionAPIs(t *testing.T) {
	e := startGroupEnv(t)
	r := e.alice
	onTxn := func(o ...kadm.ACLOperation) *kadm.ACLBuilder {
		return kadm.NewACLs().Allow("User:alice").TransactionalIDs("tx").Operations(o...)
	}

	// The super user owns a transactional id alice may not see.
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = 4, kmsg.StringPtr("admin-tx"), 60000
	ip.ProducerID, ip.ProducerEpoch = -1, -1
	wantCode(t, "admin InitProducerId", e.admin.mustDo(ip).(*kmsg.InitProducerIDResponse).ErrorCode, nil)

	initTx := func() *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, kmsg.StringPtr("tx"), 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		return r.mustDo(req).(*kmsg.InitProducerIDResponse)
	}
	wantCode(t, "InitProducerId without ACLs", initTx().ErrorCode, kerr.TransactionalIDAuthorizationFailed)

	addParts := func(id string, pid int64, epoch int16) *kmsg.AddPartitionsToTxnResponse {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
		for _, topic := range []string{"t", "u"} {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			req.Topics = append(req.Topics, rt)
		}
		return r.mustDo(req).(*kmsg.AddPartitionsToTxnResponse)
	}
	addCodes := func(resp *kmsg.AddPartitionsToTxnResponse) string {
		return partitionCodes(resp.Topics, func(t kmsg.AddPartitionsToTxnResponseTopic) (string, []int32, []int16) {
			var ps []int32
			var cs []int16
			for _, p := range t.Partitions {
				ps, cs = append(ps, p.Partition), append(cs, p.ErrorCode)
			}
			return t.Topic, ps, cs
		})
	}
	want(t, "AddPartitionsToTxn without ACLs", addCodes(addParts("tx", 1, 0)),
		"t:0=TRANSACTIONAL_ID_AUTHORIZATION_FAILED u:0=TRANSACTIONAL_ID_AUTHORIZATION_FAILED")

	e.grant(onTxn(kadm.OpWrite))
	init := initTx()
	wantCode(t, "InitProducerId with WRITE on the id", init.ErrorCode, nil)
	pid, epoch := init.ProducerID, init.ProducerEpoch
	want(t, "AddPartitionsToTxn without topic WRITE", addCodes(addParts("tx", pid, epoch)),
		"t:0=TOPIC_AUTHORIZATION_FAILED u:0=TOPIC_AUTHORIZATION_FAILED")
	e.grant(aliceOnTopics(ops(kadm.OpWrite), "t"))
	want(t, "AddPartitionsToTxn with WRITE on t only", addCodes(addParts("tx", pid, epoch)),
		"t:0=OPERATION_NOT_ATTEMPTED u:0=TOPIC_AUTHORIZATION_FAILED")
	want(t, "AddPartitionsToTxn on another id", addCodes(addParts("admin-tx", pid, epoch)),
		"t:0=TRANSACTIONAL_ID_AUTHORIZATION_FAILED u:0=TRANSACTIONAL_ID_AUTHORIZATION_FAILED")

	// v4+ is the brokers' verification API: CLUSTER_ACTION.
	v4 := kmsg.NewPtrAddPartitionsToTxnRequest()
	v4.Version = 4
	tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = "tx", pid, epoch, true
	v4.Transactions = append(v4.Transactions, tr)
	wantCode(t, "AddPartitionsToTxn v4", r.mustDo(v4).(*kmsg.AddPartitionsToTxnResponse).ErrorCode, kerr.ClusterAuthorizationFailed)

	addOffsets := func(id string) int16 {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = 3, id, pid, epoch, "exists"
		return r.mustDo(req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	wantCode(t, "AddOffsetsToTxn on another id", addOffsets("admin-tx"), kerr.TransactionalIDAuthorizationFailed)
	wantCode(t, "AddOffsetsToTxn without group READ", addOffsets("tx"), kerr.GroupAuthorizationFailed)

	txnCommit := func(id string) *kmsg.TxnOffsetCommitResponse {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, id, "exists", pid, epoch
		req.Generation = -1
		for _, topic := range []string{"t", "u"} {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = 0, 7, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		return r.mustDo(req).(*kmsg.TxnOffsetCommitResponse)
	}
	txnCodes := func(resp *kmsg.TxnOffsetCommitResponse) string {
		return partitionCodes(resp.Topics, func(t kmsg.TxnOffsetCommitResponseTopic) (string, []int32, []int16) {
			var ps []int32
			var cs []int16
			for _, p := range t.Partitions {
				ps, cs = append(ps, p.Partition), append(cs, p.ErrorCode)
			}
			return t.Topic, ps, cs
		})
	}
	want(t, "TxnOffsetCommit on another id", txnCodes(txnCommit("admin-tx")),
		"t:0=TRANSACTIONAL_ID_AUTHORIZATION_FAILED u:0=TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
	want(t, "TxnOffsetCommit without group READ", txnCodes(txnCommit("tx")),
		"t:0=GROUP_AUTHORIZATION_FAILED u:0=GROUP_AUTHORIZATION_FAILED")

	e.grant(aliceOnGroups(ops(kadm.OpRead), "exists"))
	wantCode(t, "AddOffsetsToTxn with group READ", addOffsets("tx"), nil)
	// The group's offsets partition is in the transaction now; t is READ-authorized, u is not.
	e.grant(aliceOnTopics(ops(kadm.OpRead), "t"))
	want(t, "TxnOffsetCommit with READ on t only", txnCodes(txnCommit("tx")),
		"t:0=NONE u:0=TOPIC_AUTHORIZATION_FAILED")

	endTxn := func(id string) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 3, id, pid, epoch, true
		return r.mustDo(req).(*kmsg.EndTxnResponse).ErrorCode
	}
	wantCode(t, "EndTxn on another id", endTxn("admin-tx"), kerr.TransactionalIDAuthorizationFailed)
	wantCode(t, "EndTxn", endTxn("tx"), nil)

	wm := kmsg.NewPtrWriteTxnMarkersRequest()
	wm.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = pid, epoch, false
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "t", []int32{0}
	m.Topics = append(m.Topics, mt)
	wm.Markers = append(wm.Markers, m)
	got := r.mustDo(wm).(*kmsg.WriteTxnMarkersResponse)
	wantCode(t, "WriteTxnMarkers", got.Markers[0].Topics[0].Partitions[0].ErrorCode, kerr.ClusterAuthorizationFailed)

	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.Version, dt.TransactionalIDs = 0, []string{"tx", "admin-tx", "missing"}
	states := r.mustDo(dt).(*kmsg.DescribeTransactionsResponse).TransactionStates
	if len(states) != 3 {
		t.Fatalf("DescribeTransactions answered %d ids", len(states))
	}
	wantCode(t, "DescribeTransactions tx", states[0].ErrorCode, nil)
	wantCode(t, "DescribeTransactions admin-tx", states[1].ErrorCode, kerr.TransactionalIDAuthorizationFailed)
	wantCode(t, "DescribeTransactions missing", states[2].ErrorCode, kerr.TransactionalIDAuthorizationFailed)
	if states[0].State != "CompleteCommit" || states[0].ProducerID != pid {
		t.Fatalf("DescribeTransactions tx: %+v", states[0])
	}

	lt := kmsg.NewPtrListTransactionsRequest()
	lt.Version = 0
	var listed []string
	for _, s := range r.mustDo(lt).(*kmsg.ListTransactionsResponse).TransactionStates {
		listed = append(listed, s.TransactionalID)
	}
	want(t, "ListTransactions as alice", joinSorted(listed), "tx")
	listed = nil
	for _, s := range e.admin.mustDo(lt).(*kmsg.ListTransactionsResponse).TransactionStates {
		listed = append(listed, s.TransactionalID)
	}
	want(t, "ListTransactions as the super user", joinSorted(listed), "admin-tx,tx")

	dp := kmsg.NewPtrDescribeProducersRequest()
	for _, topic := range []string{"t", "u"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		dp.Topics = append(dp.Topics, rt)
	}
	prod := r.mustDo(dp).(*kmsg.DescribeProducersResponse)
	want(t, "DescribeProducers", partitionCodes(prod.Topics, func(t kmsg.DescribeProducersResponseTopic) (string, []int32, []int16) {
		var ps []int32
		var cs []int16
		for _, p := range t.Partitions {
			ps, cs = append(ps, p.Partition), append(cs, p.ErrorCode)
		}
		return t.Topic, ps, cs
	}), "t:0=NONE u:0=TOPIC_AUTHORIZATION_FAILED")
}

func joinSorted(s []string) string {
	sort.Strings(s)
	return strings.Join(s, ",")
}
