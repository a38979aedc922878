package groups

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// Classic-protocol answers checked over loopback against Kafka's rules for the corner cases
// clients and tools meet (GroupCoordinatorService, GroupMetadataManager).

// TestLeaveGroupUnknownGroup: a LeaveGroup for a group that does not exist answers every member
// UNKNOWN_MEMBER_ID with no group-level error on v3+, and UNKNOWN_MEMBER_ID at the top level on
// v0–v2 (Kafka's GroupCoordinatorService.leaveGroup).
func TestLeaveGroupUnknownGroup(t *testing.T) {
	b := testutil.Start(t)
	inst := "inst-1"
	for _, v := range []int16{3, 5} {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group = "no-such-group"
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m-1"}, {InstanceID: &inst}}
		resp := otSend[*kmsg.LeaveGroupResponse](t, b.Addr(), v, req)
		if resp.ErrorCode != 0 || len(resp.Members) != 2 {
			t.Fatalf("v%d: %v, %d members", v, kerr.ErrorForCode(resp.ErrorCode), len(resp.Members))
		}
		for i, m := range resp.Members {
			if m.MemberID != req.Members[i].MemberID || (m.InstanceID == nil) != (req.Members[i].InstanceID == nil) ||
				m.ErrorCode != kerr.UnknownMemberID.Code {
				t.Errorf("v%d member %d: %s/%v %v", v, i, m.MemberID, m.InstanceID, kerr.ErrorForCode(m.ErrorCode))
			}
		}
	}
	for _, v := range []int16{0, 2} {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group, req.MemberID = "no-such-group", "m-1"
		if resp := otSend[*kmsg.LeaveGroupResponse](t, b.Addr(), v, req); resp.ErrorCode != kerr.UnknownMemberID.Code {
			t.Errorf("v%d: %v, want UNKNOWN_MEMBER_ID", v, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
}

// TestJoinGroupCheckOrder: JoinGroup looks the group up and applies group.max.size before it
// judges the protocols (Kafka's classicGroupJoinToClassicGroup, then supportsProtocols).
func TestJoinGroupCheckOrder(t *testing.T) {
	b := testutil.Start(t, "group.max.size=1")
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t": 1})
	join := func(v int16, group, member, protoType string, protocols ...string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, member, protoType
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 30000
		for _, n := range protocols {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = n, []byte{0, 1, 0, 0, 0, 0, 0, 0}
			req.Protocols = append(req.Protocols, p)
		}
		return otSend[*kmsg.JoinGroupResponse](t, addr, v, req)
	}
	want := func(what string, r *kmsg.JoinGroupResponse, code int16) {
		t.Helper()
		if r.ErrorCode != code {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(r.ErrorCode), kerr.ErrorForCode(code))
		}
	}
	want("member id, no group, no protocol type", join(5, "absent", "m-1", ""), kerr.UnknownMemberID.Code)
	want("member id, no group, no protocols", join(5, "absent", "m-1", "consumer"), kerr.UnknownMemberID.Code)
	want("new member, no protocol type", join(5, "absent", "", "", "range"), kerr.InconsistentGroupProtocol.Code)

	otJoin(t, addr, "full", "consumer", "t")
	want("full group, other protocol", join(3, "full", "", "consumer", "roundrobin"), kerr.GroupMaxSizeReached.Code)
	want("full group, other protocol type", join(5, "full", "", "connect", "range"), kerr.GroupMaxSizeReached.Code)
	want("full group, same protocol", join(3, "full", "", "consumer", "range"), kerr.GroupMaxSizeReached.Code)
}

// TestOffsetFetchRequireStableV7: OffsetFetch v7 (RequireStable, one group, top-level topics)
// answers a partition with a pending transactional offset UNSTABLE_OFFSET_COMMIT at the partition
// level, as v8+ does (Kafka's OffsetFetchResponse keeps each partition's error for v2–v7).
func TestOffsetFetchRequireStableV7(t *testing.T) {
	b := testutil.Start(t)
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"t": 2})
	otCommit(t, addr, "tg", map[string]map[int32]otOffset{"t": {0: {3, -1, ""}, 1: {4, -1, ""}}})
	cl := otClient(t, addr)
	ctx := otCtx(t)
	txnID := "tx-stable"
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = &txnID, 60000
	ipr, err := ip.RequestWith(ctx, cl)
	if err != nil || ipr.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %+v", err, ipr)
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txnID, ipr.ProducerID, ipr.ProducerEpoch, "tg"
	if r, err := ao.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %+v", err, r)
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = txnID, "tg", ipr.ProducerID, ipr.ProducerEpoch, -1
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 10, LeaderEpoch: -1}}}}
	if r, err := tc.RequestWith(ctx, cl); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("TxnOffsetCommit: %v %+v", err, r)
	}
	for _, all := range []bool{true, false} {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group, req.RequireStable = "tg", true
		if !all {
			req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
		}
		resp := otSend[*kmsg.OffsetFetchResponse](t, addr, 7, req)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
			t.Fatalf("all=%v: %+v", all, resp)
		}
		for _, p := range resp.Topics[0].Partitions {
			wantCode, wantOffset := int16(0), int64(4)
			if p.Partition == 0 {
				wantCode, wantOffset = kerr.UnstableOffsetCommit.Code, -1
			}
			if p.ErrorCode != wantCode || p.Offset != wantOffset {
				t.Errorf("all=%v partition %d: offset %d %v, want %d %v", all, p.Partition, p.Offset,
					kerr.ErrorForCode(p.ErrorCode), wantOffset, kerr.ErrorForCode(wantCode))
			}
		}
	}
}
