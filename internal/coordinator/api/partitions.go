package api

import "github.com/muster-io/muster/internal/metadata"

type topicPartition struct {
	topic     string
	partition int32
}

// splitUnknownPartitions is KafkaApis' metadata check for OffsetCommit and OffsetDelete: a
// partition of a topic that does not exist (or beyond its partition count) answers
// UNKNOWN_TOPIC_OR_PARTITION and never reaches the coordinator. It returns the request topics
// reduced to known partitions (topics left without partitions are dropped) and the unknown set.
// split gives a request topic's name and partitions, partition a partition's index and
// withPartitions a copy of the topic with the given partitions. With no image (no data plane)
// every partition is known.
func splitUnknownPartitions[T, P any](im *metadata.Image, topics []T, split func(T) (string, []P),
	partition func(P) int32, withPartitions func(T, []P) T) ([]T, map[topicPartition]bool) {
	unknown := map[topicPartition]bool{}
	if im == nil {
		return topics, unknown
	}
	known := make([]T, 0, len(topics))
	for _, t := range topics {
		name, ps := split(t)
		_, n, ok := im.TopicID(name)
		var keep []P
		for _, p := range ps {
			if id := partition(p); !ok || id < 0 || id >= n {
				unknown[topicPartition{name, id}] = true
			} else {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			known = append(known, withPartitions(t, keep))
		}
	}
	return known, unknown
}
