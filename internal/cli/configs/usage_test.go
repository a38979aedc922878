package configs

import (
	"testing"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
)

func runCmd(args ...string) clikittest.Result { return clikittest.Run(NewCommand(), args...) }

// Usage errors are found before any connection is made, with kafka-configs.sh's messages.
func TestUsageErrors(t *testing.T) {
	const bs = "127.0.0.1:1"
	clikittest.CheckUsageErrors(t, runCmd, "configs", []clikittest.UsageCase{
		{Name: "no action", Args: []string{"--bootstrap-server", bs, "--entity-type", "topics"}, Stderr: "Error: Command must include exactly one action: --describe, --alter\n"},
		{Name: "two actions", Args: []string{"--bootstrap-server", bs, "--describe", "--alter", "--entity-type", "topics"}, Stderr: "Error: Command must include exactly one action: --describe, --alter\n"},
		{Name: "describe with add-config", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-type", "topics", "--add-config", "a=b"}, Stderr: "Error: Option \"[describe]\" can't be used with option \"[add-config]\"\n"},
		{Name: "no entity type", Args: []string{"--bootstrap-server", bs, "--describe"}, Stderr: "Error: At least one entity type must be specified\n"},
		{Name: "bad entity type", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-type", "planets"}, Stderr: "Error: Invalid entity type planets, the entity type must be one of topics, brokers, groups, users with a --bootstrap-server or --bootstrap-controller argument\n"},
		{Name: "duplicate type", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-type", "topics", "--entity-type", "topics"}, Stderr: "Error: Duplicate entity type(s) specified: topics\n"},
		{Name: "two types", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-type", "topics", "--entity-type", "groups"}, Stderr: "Error: Only 'users' and 'clients' entity types may be specified together\n"},
		{Name: "mixed flags", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-name", "x", "--topic", "t"}, Stderr: "Error: --entity-{type,name,default} should not be used in conjunction with specific entity flags\n"},
		{Name: "no bootstrap", Args: []string{"--describe", "--entity-type", "topics"}, Stderr: "Error: One of the required --bootstrap-server or --bootstrap-controller arguments must be specified\n"},
		{Name: "broker id", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-type", "brokers", "--entity-name", "one"}, Stderr: "Error: The entity name for brokers must be a valid integer broker id, but it is: one\n"},
		{Name: "bad topic name", Args: []string{"--bootstrap-server", bs, "--describe", "--topic", "a b"}, Stderr: "Error: Topic name \"a b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'\n"},
		{Name: "default describe of topics", Args: []string{"--bootstrap-server", bs, "--describe", "--entity-type", "topics", "--entity-default"}, Stderr: "Error: --entity-default must not be specified with --describe of topics\n"},
		{Name: "alter without name", Args: []string{"--bootstrap-server", bs, "--alter", "--entity-type", "topics", "--add-config", "a=b"}, Stderr: "Error: An entity name must be specified with --alter of topics\n"},
		{Name: "alter brokers without name", Args: []string{"--bootstrap-server", bs, "--alter", "--entity-type", "brokers", "--add-config", "a=b"}, Stderr: "Error: An entity-name or default entity must be specified with --alter of users, clients, brokers or ips\n"},
		{Name: "alter nothing", Args: []string{"--bootstrap-server", bs, "--alter", "--topic", "t"}, Stderr: "Error: At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter\n"},
		{Name: "add twice", Args: []string{"--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config", "a=b", "--add-config-file", "/x"}, Stderr: "Error: Only one of --add-config or --add-config-file must be specified\n"},
		{Name: "bad pair", Args: []string{"--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config", "retention.ms"}, Stderr: "Error: Invalid entity config: all configs to be added must be in the format \"key=val\".\n"},
		{Name: "bad key", Args: []string{"--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config", "re$t=1"}, Stderr: "Error: Invalid character found for config key: re$t\n"},
		{Name: "stray argument", Args: []string{"--bootstrap-server", bs, "--describe", "--topic", "t", "extra"}, Stderr: "Error: Found non-option argument 'extra'.\n"},
		{Name: "unknown flag", Args: []string{"--bootstrap-server", bs, "--describe", "--bogus"}, Stderr: "Error: unknown flag: --bogus\n"},
	})
}

func TestParseAddConfig(t *testing.T) {
	o := &options{addConfig: "cleanup.policy=[compact,delete], retention.ms = 100,empty="}
	got, err := o.configsToAdd()
	if err != nil {
		t.Fatal(err)
	}
	want := []configEntry{{"cleanup.policy", "compact,delete"}, {"empty", ""}, {"retention.ms", "100"}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestUnreachableBroker(t *testing.T) {
	r := runCmd("--bootstrap-server", "127.0.0.1:1", "--describe", "--topic", "t", "--timeout", "200")
	if r.Code != 1 || r.Stderr == "" {
		t.Fatalf("code %d stderr %q", r.Code, r.Stderr)
	}
}
