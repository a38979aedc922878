package consumergroups

import (
	"strings"
	"testing"
)

// Usage errors are detected before any connection is made, so no cluster is
// needed; the bootstrap address is never dialled.
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
		{"describe without group", []string{"--bootstrap-server", bs, "--describe"}, "Error: Option [describe] takes one of these options: [all-groups], [group]\n"},
		{"delete without group", []string{"--bootstrap-server", bs, "--delete"}, "Error: Option [delete] takes one of these options: [all-groups], [group]\n"},
		{"reset without group", []string{"--bootstrap-server", bs, "--reset-offsets", "--all-topics", "--to-earliest"}, "Error: Option [reset-offsets] takes one of these options: [all-groups], [group]\n"},
		{"delete-offsets without group", []string{"--bootstrap-server", bs, "--delete-offsets", "--topic", "t"}, "Error: Option [delete-offsets] takes the following options: [group] (exactly one), [topic]\n"},
		{"delete-offsets without topic", []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g"}, "Error: Option [delete-offsets] takes the following options"},
		{"missing bootstrap", []string{"--list"}, "Error: Missing required argument \"[bootstrap-server]\"\n"},
		{"invalid state", []string{"--bootstrap-server", bs, "--list", "--state=bogus"}, "Error: Invalid state list 'bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling\n"},
		{"invalid type", []string{"--bootstrap-server", bs, "--list", "--type=share"}, "Error: Invalid types list 'share'. Valid types are: Consumer, Classic\n"},
		{"describe state with value", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--state=Stable"}, "Error: Option [describe] does not take a value for [state]\n"},
		{"describe two views", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--members", "--offsets"}, "Error: Option [describe] takes at most one of these options: [members], [offsets], [state]\n"},
		{"reset no specifier", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics"}, "Error: Option [reset-offsets] requires one of the following scenarios"},
		{"reset two specifiers", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest"}, "Error: Option [reset-offsets] takes only one of the reset scenarios"},
		{"reset no scope", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--to-earliest"}, "Error: One of the reset scopes should be defined: --all-topics, --topic.\n"},
		{"reset dry-run and execute", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--dry-run", "--execute"}, "Error: Option [reset-offsets] only accepts one of [execute] and [dry-run]\n"},
		{"bad duration", []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "1h"}, "Error: Invalid duration '1h'"},
		{"bad partition", []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g", "--topic", "t:x"}, "Error: Invalid partition 'x' specified in topic arg 't:x'\n"},
		{"bad output", []string{"--bootstrap-server", bs, "--list", "--output", "yaml"}, "Error: Invalid output format 'yaml'. Valid formats are: text, json\n"},
		{"unknown flag", []string{"--bootstrap-server", bs, "--list", "--bogus"}, "Error: unknown flag: --bogus\n"},
		{"stray argument", []string{"--bootstrap-server", bs, "--describe", "--group", "g", "extra"}, "Error: Found non-option argument 'extra'.\n"},
		{"group with all-groups", []string{"--bootstrap-server", bs, "--delete", "--group", "g", "--all-groups"}, "Error: Option [group] can't be used along with option [all-groups]\n"},
		{"delete with topic", []string{"--bootstrap-server", bs, "--delete", "--group", "g", "--topic", "t"}, "Error: The consumer does not support topic-specific offset deletion from a consumer group.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(tc.args...)
			if r.code != 1 {
				t.Fatalf("exit code %d, want 1 (err %v, stderr %q)", r.code, r.err, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, tc.stderr) {
				t.Errorf("stderr %q, want prefix %q", r.stderr, tc.stderr)
			}
			if !strings.Contains(r.stderr, "Run 'consumer-groups --help' for usage.") {
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
	if r.code != 1 || !strings.HasPrefix(r.stderr, "Error: Executing consumer group command failed due to ") {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
}
