package coordinator

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// PartitionErrors is what Group.ValidateOffsetCommit returns when the commit as a whole is
// valid but some partitions are not (KIP-1251, Kafka 4.3+: a commit with an older member epoch
// is accepted only for partitions the member was assigned at or before that epoch). The listed
// partitions get their error code and are not committed; the others are committed.
type PartitionErrors struct {
	// Errs is topic → partition → error.
	Errs map[string]map[int32]*kerr.Error
}

// add records err for topic/partition.
func (e *PartitionErrors) add(topic string, partition int32, err *kerr.Error) {
	if e.Errs == nil {
		e.Errs = map[string]map[int32]*kerr.Error{}
	}
	if e.Errs[topic] == nil {
		e.Errs[topic] = map[int32]*kerr.Error{}
	}
	e.Errs[topic][partition] = err
}

// orNil returns e, or nil (an untyped nil error) when no partition failed.
func (e *PartitionErrors) orNil() error {
	if e == nil || len(e.Errs) == 0 {
		return nil
	}
	return e
}

// Code returns the error code of topic/partition (0 when it has none).
func (e *PartitionErrors) Code(topic string, partition int32) int16 {
	if e == nil {
		return 0
	}
	if err := e.Errs[topic][partition]; err != nil {
		return err.Code
	}
	return 0
}

// Error implements error.
func (e *PartitionErrors) Error() string {
	n := 0
	for _, ps := range e.Errs {
		n += len(ps)
	}
	return fmt.Sprintf("%d partition(s) rejected by offset commit validation", n)
}

// commitPartitions is the request's topic → partitions map for CommitIdentity.Partitions.
func commitPartitions[T any](topics []T, parts func(T) (string, []int32)) map[string][]int32 {
	out := make(map[string][]int32, len(topics))
	for _, t := range topics {
		name, ps := parts(t)
		out[name] = append(out[name], ps...)
	}
	return out
}
