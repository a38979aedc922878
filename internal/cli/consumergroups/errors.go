package consumergroups

import (
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ExitError is returned by the command's RunE for every failure. Code is the
// process exit code the root command should use (always 1 today: usage errors
// and runtime errors alike, like Kafka's tool since KAFKA-19537 for streams).
// The message has already been printed on the command's stderr.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// usageError is a bad invocation; printed as "Error: msg" plus a usage hint.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// reportedError marks a failure whose messages were already printed to stderr
// (for example per-group errors in a multi-group describe).
type reportedError struct{ msg string }

func (e *reportedError) Error() string { return e.msg }

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

// toExitError prints err on stderr the way Kafka's tool does and converts it
// to an *ExitError.
func toExitError(stderr io.Writer, cmdPath string, err error) *ExitError {
	var ue *usageError
	var re *reportedError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "Error: %s\nRun '%s --help' for usage.\n", ue.msg, cmdPath)
		return &ExitError{Code: 1, Msg: ue.msg}
	case errors.As(err, &re):
		return &ExitError{Code: 1, Msg: re.msg}
	default:
		msg := "Executing consumer group command failed due to " + errMessage(err)
		fmt.Fprintf(stderr, "Error: %s\n", msg)
		return &ExitError{Code: 1, Msg: msg}
	}
}

// kafkaMessages are Kafka's Errors messages where franz-go's kerr
// description differs and the Kafka text is specified (seed 004 for
// GROUP_SUBSCRIBED_TO_TOPIC).
var kafkaMessages = map[int16]string{
	kerr.GroupSubscribedToTopic.Code: "The consumer group is actively subscribed to the topic",
}
