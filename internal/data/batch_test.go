package data

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzValidateProduceBatch: arbitrary bytes never panic the validator, and
// whatever it accepts has a readable header covering exactly the input.
func FuzzValidateProduceBatch(f *testing.F) {
	f.Add(makeBatch(batchOpts{n: 3, valSize: 4}))
	f.Add(makeBatch(batchOpts{n: 1, idem: true, pid: 7, seq: 5}))
	f.Add([]byte{})
	f.Add(make([]byte, 61))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := validateProduceBatch(b)
		if err != nil {
			return
		}
		if h.size() != len(b) || h.NumRecords != h.LastOffsetDelta+1 {
			t.Fatalf("accepted inconsistent batch %+v (len %d)", h, len(b))
		}
		recordOffsets(b, h, func(int64, int64) bool { return true })
	})
}

func TestProduceByTopicIDV13(t *testing.T) {
	e := newEnv(t)
	ti := e.createTopic("v13", 1, nil)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 13, -1
	rt := kmsg.NewProduceRequestTopic()
	rt.TopicID = ti.ID
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: makeBatch(batchOpts{n: 2})}}
	unknown := kmsg.NewProduceRequestTopic()
	unknown.TopicID = [16]byte{7}
	unknown.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: makeBatch(batchOpts{n: 2})}}
	req.Topics = []kmsg.ProduceRequestTopic{rt, unknown}
	resp := e.p.Produce(e.ctx, req)
	if resp.Topics[0].TopicID != ti.ID || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("by id: %+v", resp.Topics[0])
	}
	if resp.Topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %v", kerr.ErrorForCode(resp.Topics[1].Partitions[0].ErrorCode))
	}
}
