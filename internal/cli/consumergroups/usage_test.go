package consumergroups

import (
	"testing"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
)

// Usage errors are detected before any connection is made, so no cluster is
// needed; the bootstrap address is never dialled.
func TestUsageErrors(t *testing.T) {
	const bs = "127.0.0.1:1"
	oneAction := "Error: Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n"
	clikittest.CheckUsageErrors(t, runCmd, "consumer-groups", []clikittest.UsageCase{
		{Name: "no action", Args: []string{"--bootstrap-server", bs}, Stderr: oneAction},
		{Name: "two actions", Args: []string{"--bootstrap-server", bs, "--list", "--describe", "--group", "g"}, Stderr: oneAction},
		{Name: "describe without group", Args: []string{"--bootstrap-server", bs, "--describe"}, Stderr: "Error: Option [describe] takes one of these options: [all-groups], [group]\n"},
		{Name: "delete without group", Args: []string{"--bootstrap-server", bs, "--delete"}, Stderr: "Error: Option [delete] takes one of these options: [all-groups], [group]\n"},
		{Name: "reset without group", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--all-topics", "--to-earliest"}, Stderr: "Error: Option [reset-offsets] takes one of these options: [all-groups], [group]\n"},
		{Name: "delete-offsets without group", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--topic", "t"}, Stderr: "Error: Option [delete-offsets] takes the following options: [group] (exactly one), [topic]\n"},
		{Name: "delete-offsets without topic", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g"}, Stderr: "Error: Option [delete-offsets] takes the following options"},
		{Name: "missing bootstrap", Args: []string{"--list"}, Stderr: "Error: Missing required argument \"[bootstrap-server]\"\n"},
		{Name: "invalid state", Args: []string{"--bootstrap-server", bs, "--list", "--state=bogus"}, Stderr: "Error: Invalid state list 'bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling\n"},
		{Name: "invalid type", Args: []string{"--bootstrap-server", bs, "--list", "--type=share"}, Stderr: "Error: Invalid types list 'share'. Valid types are: Consumer, Classic\n"},
		{Name: "describe state with value", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--state=Stable"}, Stderr: "Error: Option [describe] does not take a value for [state]\n"},
		{Name: "describe two views", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "--members", "--offsets"}, Stderr: "Error: Option [describe] takes at most one of these options: [members], [offsets], [state]\n"},
		{Name: "reset no specifier", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics"}, Stderr: "Error: Option [reset-offsets] requires one of the following scenarios"},
		{Name: "reset two specifiers", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest"}, Stderr: "Error: Option [reset-offsets] takes only one of the reset scenarios"},
		{Name: "reset no scope", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--to-earliest"}, Stderr: "Error: One of the reset scopes should be defined: --all-topics, --topic.\n"},
		{Name: "reset dry-run and execute", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--dry-run", "--execute"}, Stderr: "Error: Option [reset-offsets] only accepts one of [execute] and [dry-run]\n"},
		{Name: "bad duration", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "1h"}, Stderr: "Error: Invalid duration '1h'. Format: 'PnDTnHnMnS'\n"},
		{Name: "bad partition", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g", "--topic", "t:x"}, Stderr: "Error: Invalid partition 'x' specified in topic arg 't:x''\n"},
		{Name: "topic arg without partitions", Args: []string{"--bootstrap-server", bs, "--delete-offsets", "--group", "g", "--topic", "t:"}, Stderr: "Error: Invalid topic arg 't:', expected topic name and partitions\n"},
		{Name: "topic arg with two colons", Args: []string{"--bootstrap-server", bs, "--reset-offsets", "--group", "g", "--to-earliest", "--topic", "t:1:2"}, Stderr: "Error: Invalid topic arg 't:1:2', expected topic name and partitions\n"},
		{Name: "bad output", Args: []string{"--bootstrap-server", bs, "--list", "--output", "yaml"}, Stderr: "Error: Invalid output format 'yaml'. Valid formats are: text, json\n"},
		{Name: "unknown flag", Args: []string{"--bootstrap-server", bs, "--list", "--bogus"}, Stderr: "Error: unknown flag: --bogus\n"},
		{Name: "stray argument", Args: []string{"--bootstrap-server", bs, "--describe", "--group", "g", "extra"}, Stderr: "Error: Found non-option argument 'extra'.\n"},
		{Name: "group with all-groups", Args: []string{"--bootstrap-server", bs, "--delete", "--group", "g", "--all-groups"}, Stderr: "Error: Option [group] can't be used along with option [all-groups]\n"},
		{Name: "delete with topic", Args: []string{"--bootstrap-server", bs, "--delete", "--group", "g", "--topic", "t"}, Stderr: "Error: The consumer does not support topic-specific offset deletion from a consumer group.\n"},
	})
}

func TestUnreachableBroker(t *testing.T) {
	clikittest.CheckUnreachable(t, runCmd, "Error: Executing consumer group command failed due to ")
}
