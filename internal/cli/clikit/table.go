package clikit

import (
	"fmt"
	"io"
	"strings"
)

// Row formats cols like Java's "%-W1s %-W2s ... %s": each column
// left-aligned and padded to its width (never truncated), joined by one
// space. Trailing blanks are removed.
func Row(widths []int, cols ...string) string {
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
	return strings.TrimRight(b.String(), " ")
}

// WriteRow prints Row(widths, cols...) and a newline on w.
func WriteRow(w io.Writer, widths []int, cols ...string) {
	fmt.Fprintln(w, Row(widths, cols...))
}

// WriteTable prints rows (the first is the header) with each column as wide
// as max(15, its longest cell), as Kafka's share and streams group tools do.
func WriteTable(w io.Writer, rows [][]string) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			for len(widths) <= i {
				widths = append(widths, 15)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, row := range rows {
		WriteRow(w, widths, row...)
	}
}
