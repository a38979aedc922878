package member

import "strconv"

// StatusCode is a StreamsGroupHeartbeat response status code (KIP-1071).
type StatusCode int8

// Status codes as numbered on the wire.
const (
	StatusStaleTopology                StatusCode = 0
	StatusMissingSourceTopics          StatusCode = 1
	StatusIncorrectlyPartitionedTopics StatusCode = 2
	StatusMissingInternalTopics        StatusCode = 3
	StatusShutdownApplication          StatusCode = 4
	StatusAssignmentDelayed            StatusCode = 5
	StatusMissingClientTags            StatusCode = 6
)

var statusNames = map[StatusCode]string{
	StatusStaleTopology:                "STALE_TOPOLOGY",
	StatusMissingSourceTopics:          "MISSING_SOURCE_TOPICS",
	StatusIncorrectlyPartitionedTopics: "INCORRECTLY_PARTITIONED_TOPICS",
	StatusMissingInternalTopics:        "MISSING_INTERNAL_TOPICS",
	StatusShutdownApplication:          "SHUTDOWN_APPLICATION",
	StatusAssignmentDelayed:            "ASSIGNMENT_DELAYED",
	StatusMissingClientTags:            "MISSING_CLIENT_TAGS",
}

// String returns Kafka's name of the code, or "UNKNOWN(n)".
func (c StatusCode) String() string {
	if n, ok := statusNames[c]; ok {
		return n
	}
	return "UNKNOWN(" + strconv.Itoa(int(c)) + ")"
}

// Status is one entry of a heartbeat response's Status list.
type Status struct {
	Code   StatusCode
	Detail string
}

// String renders "CODE: detail".
func (s Status) String() string {
	if s.Detail == "" {
		return s.Code.String()
	}
	return s.Code.String() + ": " + s.Detail
}
