package wire

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestErrorCodes(t *testing.T) {
	collect := func(r kmsg.Response) []int16 {
		var out []int16
		ErrorCodes(r, func(c int16) { out = append(out, c) })
		return out
	}
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.ErrorCode = 27
	if got := collect(hb); !reflect.DeepEqual(got, []int16{27}) {
		t.Errorf("Heartbeat: %v", got)
	}
	oc := kmsg.NewPtrOffsetCommitResponse()
	for _, code := range [][]int16{{0, 3}, {0}} {
		tp := kmsg.NewOffsetCommitResponseTopic()
		for _, c := range code {
			p := kmsg.NewOffsetCommitResponseTopicPartition()
			p.ErrorCode = c
			tp.Partitions = append(tp.Partitions, p)
		}
		oc.Topics = append(oc.Topics, tp)
	}
	if got := collect(oc); !reflect.DeepEqual(got, []int16{0, 3, 0}) {
		t.Errorf("OffsetCommit: %v", got)
	}
	// A nested pointer (ConsumerGroupHeartbeat's Assignment has no code) and a top-level code.
	cg := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	cg.ErrorCode = 25
	cg.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{}
	if got := collect(cg); !reflect.DeepEqual(got, []int16{25}) {
		t.Errorf("ConsumerGroupHeartbeat: %v", got)
	}
	if got := collect(nil); got != nil {
		t.Errorf("nil: %v", got)
	}
	// Every response type of every supported key can be walked (empty values).
	for _, a := range Supported {
		r := kmsg.ResponseForKey(a.Key)
		if r == nil {
			t.Fatalf("no response type for key %d", a.Key)
		}
		collect(r)
	}
}

func BenchmarkErrorCodesHeartbeat(b *testing.B) {
	r := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	n := 0
	for b.Loop() {
		ErrorCodes(r, func(int16) { n++ })
	}
}
