package consumergroups

import (
	"io"

	"github.com/twmb/franz-go/pkg/kgo"
)

// CommandConfigOpts loads a --command-config properties file into franz-go
// options (client.id, security.protocol, sasl.mechanism, sasl.jaas.config;
// other keys ignored, noted on stderr with verbose). An empty path gives no
// options. Shared with the streams-groups command.
func CommandConfigOpts(path string, verbose bool, stderr io.Writer) ([]kgo.Opt, error) {
	return loadCommandConfig(path, verbose, stderr)
}

// IsUsageError reports whether err (from CommandConfigOpts) is a bad
// invocation rather than a runtime failure.
func IsUsageError(err error) bool {
	_, ok := err.(*usageError)
	return ok
}
