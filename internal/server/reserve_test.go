package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestResponseReserve(t *testing.T) {
	fetch := func(version int16, maxBytes int32, parts ...int32) *kmsg.FetchRequest {
		r := kmsg.NewPtrFetchRequest()
		r.Version, r.MaxBytes = version, maxBytes
		rt := kmsg.NewFetchRequestTopic()
		for _, p := range parts {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
		return r
	}
	for _, c := range []struct {
		name string
		req  kmsg.Request
		want int64
	}{
		{"partitions below MaxBytes", fetch(4, 100, 10, 20), 30},
		{"MaxBytes caps the sum", fetch(4, 25, 10, 20), 25},
		{"v2 has no MaxBytes", fetch(2, 5, 10, 20), 30},
		{"negative partition max counts zero", fetch(4, 100, -5, 20), 20},
		{"not a fetch", kmsg.NewPtrMetadataRequest(), 0},
	} {
		if got := responseReserve(c.req); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
