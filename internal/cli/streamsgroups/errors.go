package streamsgroups

import (
	"errors"
	"fmt"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// usageError is a bad invocation; printed as "Error: msg" plus a usage hint.
type usageError = clikit.UsageError

var usagef = clikit.Usagef

// reportedError is a failure whose message is already on stderr.
type reportedError = clikit.ReportedError

// failedPrefix starts the message of a runtime failure (Kafka's tool text).
const failedPrefix = "Executing streams group command failed due to "

// printFailure prints err on stderr as a runtime failure ("Error:
// Executing streams group command failed due to ...") unless its message is
// already there (a reportedError).
func (r *runner) printFailure(err error) {
	var re *reportedError
	if !errors.As(err, &re) {
		fmt.Fprintf(r.stderr, "Error: %s%s\n", failedPrefix, clikit.ErrMessage(err))
	}
}
