package security

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAuthorizeShareGroupAPIs: share groups (KIP-932) are authorized as KafkaApis does:
// ShareGroupHeartbeat needs READ on the group and DESCRIBE on the subscribed topics, ShareFetch
// and ShareAcknowledge READ on the group and READ on each topic (a denied topic answers
// TOPIC_AUTHORIZATION_FAILED and is neither fetched nor acknowledged), ShareGroupDescribe and
// DescribeShareGroupOffsets DESCRIBE, DeleteShareGroupOffsets DELETE on the group.
func TestAuthorizeShareGroupAPIs(t *testing.T) {
	e := startGroupEnv(t)
	tid, uid := e.topicID("t"), e.topicID("u")
	heartbeat := func(group, member string, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.Version, req.GroupID, req.MemberID, req.SubscribedTopicNames = 1, group, member, topics
		return e.alice.mustDo(req).(*kmsg.ShareGroupHeartbeatResponse)
	}
	fetch := func(group, member string, ids ...[16]byte) *kmsg.ShareFetchResponse {
		req := kmsg.NewPtrShareFetchRequest()
		req.Version, req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes = 2, &group, &member, 10, 1<<20
		for _, id := range ids {
			rt := kmsg.NewShareFetchRequestTopic()
			rt.TopicID = id
			rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{{Partition: 0}}
			req.Topics = append(req.Topics, rt)
		}
		return e.alice.mustDo(req).(*kmsg.ShareFetchResponse)
	}

	r := heartbeat("sg", "alice-share-1", "t")
	wantCode(t, "heartbeat without READ on the group", r.ErrorCode, kerr.GroupAuthorizationFailed)
	e.grant(aliceOnGroups(ops(kadm.OpRead), "sg"))
	r = heartbeat("sg", "alice-share-1", "t")
	wantCode(t, "heartbeat subscribing an undescribable topic", r.ErrorCode, kerr.TopicAuthorizationFailed)
	e.grant(aliceOnTopics(ops(kadm.OpDescribe), "t", "u"))
	r = heartbeat("sg", "alice-share-1", "t", "u")
	wantCode(t, "heartbeat", r.ErrorCode, nil)

	f := fetch("other", "alice-share-1", tid)
	wantCode(t, "fetch without READ on the group", f.ErrorCode, kerr.GroupAuthorizationFailed)
	f = fetch("sg", "alice-share-1", tid, uid)
	wantCode(t, "fetch", f.ErrorCode, nil)
	for _, rt := range f.Topics {
		for _, p := range rt.Partitions {
			wantCode(t, "fetch partition without READ on its topic", p.ErrorCode, kerr.TopicAuthorizationFailed)
		}
	}
	e.grant(aliceOnTopics(ops(kadm.OpRead), "u"))
	req := kmsg.NewPtrShareFetchRequest()
	group, member := "sg", "alice-share-2"
	req.Version, req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes = 2, &group, &member, 10, 1<<20
	for _, id := range [][16]byte{tid, uid} {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)
	}
	f = e.alice.mustDo(req).(*kmsg.ShareFetchResponse)
	wantCode(t, "fetch of a readable and an unreadable topic", f.ErrorCode, nil)
	for _, rt := range f.Topics {
		for _, p := range rt.Partitions {
			want := error(nil)
			if rt.TopicID == tid {
				want = kerr.TopicAuthorizationFailed
			}
			if want == nil {
				wantCode(t, "readable partition", p.ErrorCode, nil)
			} else {
				wantCode(t, "unreadable partition", p.ErrorCode, kerr.TopicAuthorizationFailed)
			}
		}
	}

	ack := kmsg.NewPtrShareAcknowledgeRequest()
	ack.Version, ack.GroupID, ack.MemberID, ack.ShareSessionEpoch = 2, &group, &member, 1
	ack.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: tid, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{{Partition: 0,
		AcknowledgementBatches: []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{{FirstOffset: 0, LastOffset: 0, AcknowledgeTypes: []int8{1}}}}}}}
	a := e.alice.mustDo(ack).(*kmsg.ShareAcknowledgeResponse)
	wantCode(t, "acknowledge", a.ErrorCode, nil)
	if len(a.Topics) != 1 || a.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("acknowledging an unreadable topic: %+v", a.Topics)
	}

	d := kmsg.NewPtrShareGroupDescribeRequest()
	d.Version, d.GroupIDs = 1, []string{"other", "sg"}
	dgs := e.alice.mustDo(d).(*kmsg.ShareGroupDescribeResponse).Groups
	wantCode(t, "describe without DESCRIBE on the group", dgs[0].ErrorCode, kerr.GroupAuthorizationFailed)
	wantCode(t, "describe (READ implies DESCRIBE)", dgs[1].ErrorCode, nil)
	if len(dgs[1].Members) != 1 {
		t.Errorf("described %d members, want 1", len(dgs[1].Members))
	}

	del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	del.GroupID, del.Topics = "sg", []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: "u"}}
	wantCode(t, "delete share offsets without DELETE on the group", e.alice.mustDo(del).(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode, kerr.GroupAuthorizationFailed)
}
