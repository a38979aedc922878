package configs

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// reportedError is a failure whose message is already on stderr.
type reportedError = clikit.ReportedError

// failedPrefix starts the message of a runtime failure.
const failedPrefix = "Executing config command failed due to "

// javaExceptions are the Kafka exception classes of the errors the config APIs answer, as
// kafka-configs.sh reports them.
var javaExceptions = map[int16]string{
	kerr.InvalidConfig.Code:              "InvalidConfigurationException",
	kerr.InvalidRequest.Code:             "InvalidRequestException",
	kerr.UnknownTopicOrPartition.Code:    "UnknownTopicOrPartitionException",
	kerr.InvalidTopicException.Code:      "InvalidTopicException",
	kerr.TopicAuthorizationFailed.Code:   "TopicAuthorizationException",
	kerr.ClusterAuthorizationFailed.Code: "ClusterAuthorizationException",
	kerr.GroupAuthorizationFailed.Code:   "GroupAuthorizationException",
	kerr.PolicyViolation.Code:            "PolicyViolationException",
	kerr.UnsupportedVersion.Code:         "UnsupportedVersionException",
	kerr.KafkaStorageError.Code:          "KafkaStorageException",
}

// errMessage is the text of a failure: a broker's error as Kafka's exception and message
// ("org.apache.kafka.common.errors.InvalidConfigurationException: Unknown topic config name:
// x"), anything else as it is.
func errMessage(err error) string {
	var be *brokerError
	if errors.As(err, &be) {
		name, ok := javaExceptions[be.code.Code]
		if !ok {
			name = be.code.Message
			return name + ": " + be.Error()
		}
		return "org.apache.kafka.common.errors." + name + ": " + be.Error()
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message + ": " + ke.Description
	}
	return err.Error()
}
