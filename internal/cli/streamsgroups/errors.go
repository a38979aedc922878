package streamsgroups

import (
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/consumergroups"
)

// usageError is a bad invocation; printed as "Error: msg" plus a usage hint.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// reportedError is a failure whose message is already on stderr.
type reportedError struct{ msg string }

func (e *reportedError) Error() string { return e.msg }

// reportf prints "Error: msg" on w and returns a reportedError.
func reportf(w io.Writer, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(w, "Error: %s\n", msg)
	return &reportedError{msg: msg}
}

// errMessage is the human text of an error: Kafka's description for broker
// error codes, else err.Error().
func errMessage(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) && err == error(ke) {
		return ke.Description
	}
	return err.Error()
}

// toExitError prints err the way Kafka's tool does and converts it to the
// exit error the root command understands.
func toExitError(stderr io.Writer, cmdPath string, err error) *consumergroups.ExitError {
	var ue *usageError
	var re *reportedError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "Error: %s\nRun '%s --help' for usage.\n", ue.msg, cmdPath)
		return &consumergroups.ExitError{Code: 1, Msg: ue.msg}
	case errors.As(err, &re):
		return &consumergroups.ExitError{Code: 1, Msg: re.msg}
	default:
		msg := "Executing streams group command failed due to " + errMessage(err)
		fmt.Fprintf(stderr, "Error: %s\n", msg)
		return &consumergroups.ExitError{Code: 1, Msg: msg}
	}
}
