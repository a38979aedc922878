// Package clikittest holds the test helpers the admin command packages
// share: running a cobra command in-process and checking its exit code and
// output, the usage-error table check, and reading committed offsets.
package clikittest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// Result is what one in-process run of a command printed and returned.
// Code is the *clikit.ExitError code, 0 on success, -1 for another error.
type Result struct {
	Stdout, Stderr string
	Code           int
	Err            error
}

// Run executes cmd with args, capturing stdout and stderr.
func Run(cmd *cobra.Command, args ...string) Result {
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Err: err}
	if err != nil {
		var ee *clikit.ExitError
		if errors.As(err, &ee) {
			r.Code = ee.Code
		} else {
			r.Code = -1
		}
	}
	return r
}

// Expect checks the exit code and the exact stdout and stderr; "*" matches
// any output.
func (r Result) Expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit code %d, want %d (err %v)\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Err, r.Stdout, r.Stderr)
	}
	if stdout != "*" && r.Stdout != stdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.Stdout, stdout)
	}
	if stderr != "*" && r.Stderr != stderr {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, stderr)
	}
}

// Lines joins ls with newlines and ends with one.
func Lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// UsageCase is one bad invocation and the prefix of what it prints on stderr.
type UsageCase struct {
	Name   string
	Args   []string
	Stderr string // prefix
}

// CheckUsageErrors runs every case through run and checks exit code 1, the
// stderr prefix, the "Run '<cmdName> --help' for usage." hint and an empty
// stdout.
func CheckUsageErrors(t *testing.T, run func(args ...string) Result, cmdName string, cases []UsageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			r := run(tc.Args...)
			if r.Code != 1 {
				t.Fatalf("exit code %d, want 1 (err %v, stderr %q)", r.Code, r.Err, r.Stderr)
			}
			if !strings.HasPrefix(r.Stderr, tc.Stderr) {
				t.Errorf("stderr %q, want prefix %q", r.Stderr, tc.Stderr)
			}
			if !strings.Contains(r.Stderr, "Run '"+cmdName+" --help' for usage.") {
				t.Errorf("stderr %q lacks the usage hint", r.Stderr)
			}
			if r.Stdout != "" {
				t.Errorf("stdout %q, want empty", r.Stdout)
			}
		})
	}
}

// CheckUnreachable runs --list against a closed port with a short timeout
// and checks exit code 1 and the stderr prefix.
func CheckUnreachable(t *testing.T, run func(args ...string) Result, stderrPrefix string) {
	t.Helper()
	r := run("--bootstrap-server", "127.0.0.1:1", "--list", "--timeout", "200")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, stderrPrefix) {
		t.Fatalf("code %d stderr %q", r.Code, r.Stderr)
	}
}

// Committed reads a group's committed offsets, topic -> partition -> offset.
func Committed(t testing.TB, adm *kadm.Client, group string) map[string]map[int32]int64 {
	t.Helper()
	os, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int32]int64{}
	os.Each(func(o kadm.OffsetResponse) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.At
	})
	return out
}
