package streamsgroups

import (
	"fmt"
	"io"
	"strings"
)

// missing is what Kafka's tools print for an absent value.
const missing = "-"

// writeRow prints cols like Java's "%-W1s %-W2s ... %s": left-aligned,
// padded (never truncated), one space apart, trailing blanks removed.
func writeRow(w io.Writer, widths []int, cols ...string) {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c)
		if i < len(widths) && len(c) < widths[i] {
			b.WriteString(strings.Repeat(" ", widths[i]-len(c)))
		}
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
}

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
