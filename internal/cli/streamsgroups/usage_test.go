package streamsgroups

import (
	"strings"
	"testing"
)

// Usage errors are found before any connection is made.
func TestUsageErrors(t *testing.T) {
	const bs = "127.0.0.1:1"
	oneAction := "Error: Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n"
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string // prefix
	}{
		{"no action", []string{"--bootstrap-server", bs}, oneAction},
		{"two actions", []string{"--bootstrap-server", bs, "--list", "--describe", "--group", "g"}, oneAction},
		{"missing bootstrap", []string{"--list"}, "Error: Missing required argument \"[bootstrap-server]\"\n"},
		{"bad timeout", []string{"--bootstrap-server", bs, "--list", "--timeout", "0"}, "Error: Option [timeout] must be positive, got 0\n"},
		{"describe without group", []string{"--bootstrap-server", bs, "--describe"}, "Error: Option [describe] takes one of these options: [all-groups], [group]\n"},
		{"describe two views", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--members", "--topology"}, "Error: Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]\n"},
		{"describe state value", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--state=Stable"}, "Error: Option [describe] does not take a value for [state]\n"},
		{"topology without describe", []string{"--bootstrap-server", bs, "--list", "--topology"}, "Error: Option [topology] can only be used with option [describe]\n"},
		{"format without topology", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--format", "dot"}, "Error: Option [format] can only be used with option [topology]\n"},
		{"bad format", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--topology", "--format", "svg"}, "Error: Invalid format 'svg'. Valid formats are: text, dot, mermaid\n"},
		{"invalid state", []string{"--bootstrap-server", bs, "--list", "--state=bogus"}, "Error: Invalid state list 'bogus'. Valid states are: Empty, NotReady, Assigning, Reconciling, Stable, Dead\n"},
		{"list with group", []string{"--bootstrap-server", bs, "--list", "--group", "g"}, "Error: Option [group] can't be used along with option [list]\n"},
		{"group and all-groups", []string{"--bootstrap-server", bs, "--delete", "--group", "g", "--all-groups"}, "Error: Option [group] can't be used along with option [all-groups]\n"},
		{"delete without group", []string{"--bootstrap-server", bs, "--delete"}, "Error: Option [delete] takes one of these options: [all-groups], [group]\n"},
		{"delete-offsets two groups", []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "a", "--group", "b", "--all-input-topics"}, "Error: Option [delete-offsets] takes exactly one [group]\n"},
		{"delete-offsets no scope", []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "a"}, "Error: Option [delete-offsets] takes one of these options: [all-input-topics], [input-topic]\n"},
		{"input-topic with describe", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--input-topic", "t"}, "Error: Option [input-topic] can only be used with options [reset-offsets] or [delete-offsets]\n"},
		{"bad partition", []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g", "--input-topic", "t:x"}, "Error: Invalid partition 'x' specified in topic arg 't:x'\n"},
		{"reset no mode", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--to-earliest"}, "Error: Option [reset-offsets] takes exactly one of these options: [dry-run], [execute]\n"},
		{"reset no scenario", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run"}, "Error: Option [reset-offsets] requires one of the following scenarios"},
		{"reset two scenarios", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run", "--to-earliest", "--to-latest"}, "Error: Option [reset-offsets] takes only one of the reset scenarios, got [to-earliest], [to-latest]\n"},
		{"reset no scope", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--dry-run", "--to-earliest"}, "Error: Option [reset-offsets] takes one of these options: [all-input-topics], [input-topic]\n"},
		{"reset bad duration", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run", "--by-duration", "1h"}, "Error: Invalid duration '1h'. Format: 'PnDTnHnMnS'\n"},
		{"reset bad datetime", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run", "--to-datetime", "yesterday"}, "Error: Error parsing timestamp 'yesterday'"},
		{"to-earliest without reset", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--to-earliest"}, "Error: Options [to-*, shift-by, by-duration, dry-run, execute, export] can only be used with option [reset-offsets]\n"},
		{"export without reset", []string{"--bootstrap-server", bs, "--list", "--export"}, "Error: Options [to-*, shift-by"},
		{"missing command config", []string{"--bootstrap-server", bs, "--list", "--command-config", "/nonexistent/x.properties"}, "Error: Cannot read --command-config file"},
		{"unknown flag", []string{"--bootstrap-server", bs, "--list", "--bogus"}, "Error: unknown flag: --bogus\n"},
		{"stray argument", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "extra"}, "Error: Found non-option argument 'extra'.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(tc.args...)
			if r.code != 1 {
				t.Fatalf("exit code %d, want 1 (err %v, stderr %q)", r.code, r.err, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, tc.stderr) {
				t.Errorf("stderr %q, want prefix %q", r.stderr, tc.stderr)
			}
			if !strings.Contains(r.stderr, "Run 'streams-groups --help' for usage.") {
				t.Errorf("stderr %q lacks the usage hint", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want empty", r.stdout)
			}
		})
	}
}

func TestUnreachableBroker(t *testing.T) {
	r := runCmd("--bootstrap-server", "127.0.0.1:1", "--list", "--timeout", "200")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "Error: Executing streams group command failed due to ") {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]string{"PT1H": "1h0m0s", "P1DT2H3M4S": "26h3m4s", "PT0.5S": "500ms", "pt10m": "10m0s"} {
		d, err := parseISODuration(in)
		if err != nil || d.String() != want {
			t.Errorf("%s: %v %v, want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"P", "PT", "1h", "P-1D", ""} {
		if _, err := parseISODuration(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
