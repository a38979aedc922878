package streamsgroups

import (
	"io"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// writeRow prints cols like Java's "%-W1s %-W2s ... %s" (see clikit.Row).
var writeRow = clikit.WriteRow

// widthsOf returns, per column, max(min, longest cell) over the rows.
func widthsOf(min int, rows [][]string) []int {
	var w []int
	for _, r := range rows {
		for i, c := range r {
			for len(w) <= i {
				w = append(w, min)
			}
			w[i] = max(w[i], len(c))
		}
	}
	return w
}

// writeTable prints rows (the first is the header) with computed widths.
func writeTable(w io.Writer, rows [][]string) {
	widths := widthsOf(15, rows)
	for _, r := range rows {
		writeRow(w, widths, r...)
	}
}
