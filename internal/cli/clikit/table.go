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
