package metadata

// Kafka's topic name rules (org.apache.kafka.common.internals.Topic), for requests that name
// topics the coordinator checks before anything else (StreamsGroupHeartbeat's topology).

// internalTopics are the topics Kafka reserves for itself (Topic.isInternal).
var internalTopics = map[string]bool{
	"__consumer_offsets":  true,
	"__transaction_state": true,
	"__share_group_state": true,
}

// IsInternalTopic reports whether name is one of Kafka's internal topics (Topic.isInternal).
func IsInternalTopic(name string) bool { return internalTopics[name] }

// ValidTopicName reports whether name is a legal topic name (Topic.isValid): 1–249 characters
// from [a-zA-Z0-9._-], and not "." or "..".
func ValidTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
