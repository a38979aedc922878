package consumergroups

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// row formats cols like Java's "%-W1s %-W2s ... %s" (see clikit.Row).
func row(widths []int, cols ...string) string { return clikit.Row(widths, cols...) }

var writeRow = clikit.WriteRow

func maxLen(min int, ss ...string) int {
	for _, s := range ss {
		if len(s) > min {
			min = len(s)
		}
	}
	return min
}

func ptr[T any](v T) *T { return &v }

// writeJSON writes one indented JSON document followed by a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// errString is nil for a nil error, else its message (JSON "error" fields).
func errString(err error) *string {
	if err == nil {
		return nil
	}
	return ptr(clikit.ErrMessage(err))
}
