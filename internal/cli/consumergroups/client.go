package consumergroups

import (
	"io"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// admin is the shared franz-go admin client bounded by --timeout.
type admin = clikit.Admin

func newAdmin(o *options, stderr io.Writer) (*admin, error) {
	return clikit.NewAdmin(o.ConnFlags, "muster-consumer-groups", stderr)
}
