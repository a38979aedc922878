package streamsgroups

import (
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// usageError is a bad invocation; printed as "Error: msg" plus a usage hint.
type usageError = clikit.UsageError

var usagef = clikit.Usagef

// reportedError is a failure whose message is already on stderr.
type reportedError = clikit.ReportedError

// reportf prints "Error: msg" on w and returns a reportedError.
func reportf(w io.Writer, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(w, "Error: %s\n", msg)
	return &reportedError{Msg: msg}
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

// failedPrefix starts the message of a runtime failure (Kafka's tool text).
const failedPrefix = "Executing streams group command failed due to "

// printFailure prints err on stderr as a runtime failure ("Error:
// Executing streams group command failed due to ...") unless its message is
// already there (a reportedError).
func (r *runner) printFailure(err error) {
	var re *reportedError
	if !errors.As(err, &re) {
		fmt.Fprintf(r.stderr, "Error: %s%s\n", failedPrefix, errMessage(err))
	}
}
