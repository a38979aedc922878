package consumergroups

import "github.com/muster-io/muster/internal/cli/clikit"

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

// failedPrefix starts the message of a runtime failure (Kafka's tool text).
const failedPrefix = "Executing consumer group command failed due to "
