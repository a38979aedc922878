package testutil

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareMember is a KIP-932 share group member speaking the raw protocol on one connection (its
// share session lives on that connection): ShareGroupHeartbeat, ShareFetch and
// ShareAcknowledge with the session epoch tracked for it.
type ShareMember struct {
	Conn   *RawConn
	Group  string
	ID     string
	Epoch  int32 // member epoch
	Sess   int32 // the share session epoch the next request carries
	Topics map[string][16]byte
}

// NewShareMember connects a member id to group.
func NewShareMember(addr, group, id string) (*ShareMember, error) {
	c, err := DialRaw(addr)
	if err != nil {
		return nil, err
	}
	return &ShareMember{Conn: c, Group: group, ID: id, Topics: map[string][16]byte{}}, nil
}

// Join sends a ShareGroupHeartbeat at epoch 0 subscribing to topics.
func (m *ShareMember) Join(topics ...string) (*kmsg.ShareGroupHeartbeatResponse, error) {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = m.Group, m.ID, 0, topics
	resp, err := m.Conn.Do(req)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.ShareGroupHeartbeatResponse)
	if r.ErrorCode != 0 {
		return r, kerr.ErrorForCode(r.ErrorCode)
	}
	m.Epoch = r.MemberEpoch
	return r, nil
}

// Leave sends a ShareGroupHeartbeat at epoch -1.
func (m *ShareMember) Leave() error {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch = m.Group, m.ID, -1
	resp, err := m.Conn.Do(req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode)
}

// ShareAck is one acknowledgement batch of partition 0 of a topic id.
type ShareAck struct {
	Topic       [16]byte
	Partition   int32
	First, Last int64
	Types       []int8
}

// FetchRequest builds a ShareFetch of partition 0.. of topic at the member's session epoch.
func (m *ShareMember) FetchRequest(topic [16]byte, partitions []int32, maxRecords int32, maxWaitMs int32, acks ...ShareAck) *kmsg.ShareFetchRequest {
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &m.Group, &m.ID
	req.ShareSessionEpoch = m.Sess
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWaitMs, 1, 50<<20
	req.MaxRecords, req.BatchSize = maxRecords, maxRecords
	t := kmsg.NewShareFetchRequestTopic()
	t.TopicID = topic
	for _, p := range partitions {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		for _, a := range acks {
			if a.Topic == topic && a.Partition == p {
				b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
				b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.First, a.Last, a.Types
				rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
			}
		}
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	return req
}

// Fetch sends req and, when it succeeded, moves the session epoch on (0 → 1, -1 → 0).
func (m *ShareMember) Fetch(req *kmsg.ShareFetchRequest) (*kmsg.ShareFetchResponse, error) {
	resp, err := m.Conn.Do(req)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.ShareFetchResponse)
	if r.ErrorCode == 0 {
		m.Sess = nextEpoch(req.ShareSessionEpoch)
	}
	return r, nil
}

// Acknowledge sends a ShareAcknowledge of acks at the session epoch (epoch -1 closes it).
func (m *ShareMember) Acknowledge(epoch int32, renew bool, acks ...ShareAck) (*kmsg.ShareAcknowledgeResponse, error) {
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &m.Group, &m.ID
	req.ShareSessionEpoch, req.IsRenewAck = epoch, renew
	for _, a := range acks {
		var t *kmsg.ShareAcknowledgeRequestTopic
		for i := range req.Topics {
			if req.Topics[i].TopicID == a.Topic {
				t = &req.Topics[i]
			}
		}
		if t == nil {
			req.Topics = append(req.Topics, kmsg.ShareAcknowledgeRequestTopic{TopicID: a.Topic})
			t = &req.Topics[len(req.Topics)-1]
		}
		var p *kmsg.ShareAcknowledgeRequestTopicPartition
		for i := range t.Partitions {
			if t.Partitions[i].Partition == a.Partition {
				p = &t.Partitions[i]
			}
		}
		if p == nil {
			t.Partitions = append(t.Partitions, kmsg.ShareAcknowledgeRequestTopicPartition{Partition: a.Partition})
			p = &t.Partitions[len(t.Partitions)-1]
		}
		b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.First, a.Last, a.Types
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, b)
	}
	resp, err := m.Conn.Do(req)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.ShareAcknowledgeResponse)
	if r.ErrorCode == 0 {
		m.Sess = nextEpoch(epoch)
	}
	return r, nil
}

func nextEpoch(e int32) int32 {
	if e < 0 {
		return 0
	}
	return e + 1
}

// Acquired lists a ShareFetch response's acquired offsets as "offset→delivery count".
func Acquired(r *kmsg.ShareFetchResponse) map[int64]int16 {
	out := map[int64]int16{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			for _, a := range p.AcquiredRecords {
				for o := a.FirstOffset; o <= a.LastOffset; o++ {
					out[o] = a.DeliveryCount
				}
			}
		}
	}
	return out
}

// ShareErrors summarizes a ShareFetch response's error codes ("" when there are none).
func ShareErrors(r *kmsg.ShareFetchResponse) string {
	s := ""
	if r.ErrorCode != 0 {
		s += fmt.Sprintf("top=%d ", r.ErrorCode)
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.AcknowledgeErrorCode != 0 {
				s += fmt.Sprintf("p%d=%d/%d ", p.Partition, p.ErrorCode, p.AcknowledgeErrorCode)
			}
		}
	}
	return s
}
