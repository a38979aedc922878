package streamsgroups

import (
	"testing"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
)

// Usage errors are found before any connection is made.
func TestUsageErrors(t *testing.T) {
	const bs = "127.0.0.1:1"
	oneAction := "Error: Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n"
	clikittest.CheckUsageErrors(t, runCmd, "streams-groups", []clikittest.UsageCase{
		{Name: "no action", Args: []string{"--bootstrap-server", bs}, Stderr: oneAction},
		{Name: "two actions", Args: []string{"--bootstrap-server", bs, "--list", "--describe", "--group", "g"}, Stderr: oneAction},
		{Name: "missing bootstrap", Args: []string{"--list"}, Stderr: "Error: Missing required argument \"[bootstrap-server]\"\n"},
		{Name: "bad timeout", Args: []string{"--bootstrap-server", bs, "--list", "--timeout", "0"}, Stderr: "Error: Option [timeout] must be positive, got 0\n"},
		{Name: "describe without group", Args: []string{"--bootstrap-server", bs, "--describe"}, Stderr: "Error: Option [describe] takes one of these options: [all-groups], [group]\n"},
		{Name: "describe two views", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--members", "--topology"}, Stderr: "Error: Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]\n"},
		{Name: "describe state value", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--state=Stable"}, Stderr: "Error: Option [describe] does not take a value for [state]\n"},
		{Name: "topology without describe", Args: []string{"--bootstrap-server", bs, "--list", "--topology"}, Stderr: "Error: Option [topology] can only be used with option [describe]\n"},
		{Name: "format without topology", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--format", "dot"}, Stderr: "Error: Option [format] can only be used with option [topology]\n"},
		{Name: "bad format", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--topology", "--format", "svg"}, Stderr: "Error: Invalid format 'svg'. Valid formats are: text, dot, mermaid\n"},
		{Name: "invalid state", Args: []string{"--bootstrap-server", bs, "--list", "--state=bogus"}, Stderr: "Error: Invalid state list 'bogus'. Valid states are: Empty, NotReady, Assigning, Reconciling, Stable, Dead\n"},
		{Name: "list with group", Args: []string{"--bootstrap-server", bs, "--list", "--group", "g"}, Stderr: "Error: Option [group] can't be used along with option [list]\n"},
		{Name: "group and all-groups", Args: []string{"--bootstrap-server", bs, "--delete", "--group", "g", "--all-groups"}, Stderr: "Error: Option [group] can't be used along with option [all-groups]\n"},
		{Name: "delete without group", Args: []string{"--bootstrap-server", bs, "--delete"}, Stderr: "Error: Option [delete] takes one of these options: [all-groups], [group]\n"},
		{Name: "delete-offsets two groups", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "a", "--group", "b", "--all-input-topics"}, Stderr: "Error: Option [delete-offsets] takes exactly one [group]\n"},
		{Name: "delete-offsets no scope", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "a"}, Stderr: "Error: Option [delete-offsets] takes one of these options: [all-input-topics], [input-topic]\n"},
		{Name: "input-topic with describe", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--input-topic", "t"}, Stderr: "Error: Option [input-topic] can only be used with options [reset-offsets] or [delete-offsets]\n"},
		{Name: "bad partition", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g", "--input-topic", "t:x"}, Stderr: "Error: Invalid partition 'x' specified in topic arg 't:x''\n"},
		{Name: "topic arg without partitions", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g", "--input-topic", "t:"}, Stderr: "Error: Invalid topic arg 't:', expected topic name and partitions\n"},
		{Name: "topic arg with two colons", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--dry-run", "--to-earliest", "--input-topic", "t:1:2"}, Stderr: "Error: Invalid topic arg 't:1:2', expected topic name and partitions\n"},
		{Name: "reset no mode", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--to-earliest"}, Stderr: "Error: Option [reset-offsets] takes exactly one of these options: [dry-run], [execute]\n"},
		{Name: "reset no scenario", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run"}, Stderr: "Error: Option [reset-offsets] requires one of the following scenarios"},
		{Name: "reset two scenarios", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run", "--to-earliest", "--to-latest"}, Stderr: "Error: Option [reset-offsets] takes only one of the reset scenarios, got [to-earliest], [to-latest]\n"},
		{Name: "reset no scope", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--dry-run", "--to-earliest"}, Stderr: "Error: Option [reset-offsets] takes one of these options: [all-input-topics], [input-topic]\n"},
		{Name: "reset bad duration", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run", "--by-duration", "1h"}, Stderr: "Error: Invalid duration '1h'. Format: 'PnDTnHnMnS'\n"},
		{Name: "reset bad datetime", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-input-topics", "--dry-run", "--to-datetime", "yesterday"}, Stderr: "Error: Error parsing timestamp 'yesterday'"},
		{Name: "to-earliest without reset", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--to-earliest"}, Stderr: "Error: Options [to-*, shift-by, by-duration, dry-run, execute, export] can only be used with option [reset-offsets]\n"},
		{Name: "export without reset", Args: []string{"--bootstrap-server", bs, "--list", "--export"}, Stderr: "Error: Options [to-*, shift-by"},
		{Name: "missing command config", Args: []string{"--bootstrap-server", bs, "--list", "--command-config", "/nonexistent/x.properties"}, Stderr: "Error: Cannot read --command-config file"},
		{Name: "unknown flag", Args: []string{"--bootstrap-server", bs, "--list", "--bogus"}, Stderr: "Error: unknown flag: --bogus\n"},
		{Name: "stray argument", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "extra"}, Stderr: "Error: Found non-option argument 'extra'.\n"},
	})
}

func TestUnreachableBroker(t *testing.T) {
	clikittest.CheckUnreachable(t, runCmd, "Error: Executing streams group command failed due to ")
}
