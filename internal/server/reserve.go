package server

import "github.com/twmb/franz-go/pkg/kmsg"

// responseReserve is how many response bytes a request may make the server hold, counted
// against the connection's in-flight bytes from dispatch until its response is taken for writing.
// Only Fetch answers with a size the client chooses: the sum of its partitions' PartitionMaxBytes,
// capped by MaxBytes from v3 (KIP-74; the first batch may exceed both, by at most one batch).
// Other responses are small or bounded by cluster size and count as zero.
func responseReserve(req kmsg.Request) int64 {
	f, ok := req.(*kmsg.FetchRequest)
	if !ok {
		return 0
	}
	var sum int64
	for _, t := range f.Topics {
		for _, p := range t.Partitions {
			if p.PartitionMaxBytes > 0 {
				sum += int64(p.PartitionMaxBytes)
			}
		}
	}
	if f.Version >= 3 && f.MaxBytes >= 0 && int64(f.MaxBytes) < sum {
		sum = int64(f.MaxBytes)
	}
	return sum
}
