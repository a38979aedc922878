package streamsgroups

import "github.com/muster-io/muster/internal/cli/clikit"

// writeRow prints cols like Java's "%-W1s %-W2s ... %s" (see clikit.Row).
var writeRow = clikit.WriteRow

// writeTable prints rows (the first is the header) with computed widths.
var writeTable = clikit.WriteTable
