package consumergroups

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// ExitError is the shared *clikit.ExitError: returned by the command's RunE
// for every failure, Code is the process exit code (always 1 today). Kept
// as an alias for callers of this package.
type ExitError = clikit.ExitError

// usageError is a bad invocation; printed as "Error: msg" plus a usage hint.
type usageError = clikit.UsageError

var usagef = clikit.Usagef

// reportedError marks a failure whose messages were already printed to stderr
// (for example per-group errors in a multi-group describe).
type reportedError = clikit.ReportedError

// errMessage returns the human text of a broker error: the Kafka error
// description for kerr errors (what Kafka's exceptions carry as message),
// otherwise err.Error().
func errMessage(err error) string {
	if err == nil {
		return ""
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if m, ok := kafkaMessages[ke.Code]; ok {
			return m
		}
		return ke.Description
	}
	return err.Error()
}

// failedPrefix starts the message of a runtime failure (Kafka's tool text).
const failedPrefix = "Executing consumer group command failed due to "

// kafkaMessages are Kafka's Errors messages where franz-go's kerr
// description differs and the Kafka text is specified (seed 004 for
// GROUP_SUBSCRIBED_TO_TOPIC).
var kafkaMessages = map[int16]string{
	kerr.GroupSubscribedToTopic.Code: "The consumer group is actively subscribed to the topic",
}
