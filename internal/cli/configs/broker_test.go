package configs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/cli/clikit/clikittest"
	"github.com/muster-io/muster/internal/testutil"
)

var lines = clikittest.Lines

func newBroker(t *testing.T) (addr string, adm *kadm.Client) {
	t.Helper()
	b := testutil.Start(t, "log.retention.hours=2")
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm = kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "orders"); err != nil {
		t.Fatal(err)
	}
	return b.Addr(), adm
}

// Topics: --alter sets and deletes configs, --describe shows the dynamic ones with their
// synonyms, --describe --all every config; errors from the broker exit 1 with Kafka's
// exception and message.
func TestTopicConfigs(t *testing.T) {
	addr, _ := newBroker(t)
	bs := []string{"--bootstrap-server", addr}
	run := func(args ...string) clikittest.Result { return runCmd(append(bs, args...)...) }

	run("--describe", "--entity-type", "topics", "--entity-name", "orders").Expect(t, 0,
		lines("Dynamic configs for topic orders are:",
			"  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}"), "")
	run("--alter", "--entity-type", "topics", "--entity-name", "orders",
		"--add-config", "retention.ms=60000,cleanup.policy=[compact,delete]").Expect(t, 0,
		lines("Completed updating config for topic orders."), "")
	run("--describe", "--topic", "orders").Expect(t, 0,
		lines("Dynamic configs for topic orders are:",
			"  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}",
			"  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000}"), "") // Kafka drops the synonyms that precede log.retention.ms
	run("--alter", "--topic", "orders", "--delete-config", "retention.ms").Expect(t, 0,
		lines("Completed updating config for topic orders."), "")
	all := run("--describe", "--all", "--topic", "orders")
	if all.Code != 0 || !strings.HasPrefix(all.Stdout, "All configs for topic orders are:\n") ||
		!strings.Contains(all.Stdout, "\n  retention.ms=7200000 sensitive=false synonyms={}\n") ||
		!strings.Contains(all.Stdout, "\n  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}\n") {
		t.Fatalf("--all: %+v", all)
	}
	run("--alter", "--topic", "orders", "--delete-config", "retention.ms").Expect(t, 1, "",
		lines("Error: Invalid config(s): retention.ms"))
	run("--alter", "--topic", "orders", "--add-config", "segment.bytes=10").Expect(t, 1, "",
		lines("Error: Executing config command failed due to org.apache.kafka.common.errors.InvalidConfigurationException: Invalid value 10 for configuration segment.bytes: Value must be at least 1048576"))
	run("--alter", "--topic", "nosuch", "--add-config", "retention.ms=1").Expect(t, 1, "",
		lines("Error: Executing config command failed due to org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The topic 'nosuch' does not exist."))
	all = run("--describe", "--entity-type", "topics")
	if all.Code != 0 || !strings.Contains(all.Stdout, "Dynamic configs for topic orders are:\n  cleanup.policy=compact,delete") {
		t.Fatalf("every topic: %+v", all)
	}
}

// Brokers: the cluster default (--entity-default) and one broker (--entity-name 0); read-only
// keys are refused by the broker.
func TestBrokerConfigs(t *testing.T) {
	addr, _ := newBroker(t)
	bs := []string{"--bootstrap-server", addr}
	run := func(args ...string) clikittest.Result { return runCmd(append(bs, args...)...) }

	run("--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.backoff.ms=500").Expect(t, 0,
		lines("Completed updating default config for brokers in the cluster."), "")
	run("--alter", "--broker", "0", "--add-config", "log.retention.ms=1000").Expect(t, 0,
		lines("Completed updating config for broker 0."), "")
	run("--describe", "--entity-type", "brokers", "--entity-default").Expect(t, 0,
		lines("Default configs for brokers in the cluster are:",
			"  log.cleaner.backoff.ms=500 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.backoff.ms=500}"), "")
	run("--describe", "--broker", "0").Expect(t, 0,
		lines("Dynamic configs for broker 0 are:",
			"  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, STATIC_BROKER_CONFIG:log.retention.hours=2, DEFAULT_CONFIG:log.retention.hours=168}"), "")
	every := run("--describe", "--entity-type", "brokers")
	if every.Code != 0 || !strings.Contains(every.Stdout, "Dynamic configs for broker 0 are:\n") ||
		!strings.Contains(every.Stdout, "Default configs for brokers in the cluster are:\n") {
		t.Fatalf("every broker: %+v", every)
	}
	run("--alter", "--broker-defaults", "--add-config", "num.partitions=3").Expect(t, 1, "",
		lines("Error: Executing config command failed due to org.apache.kafka.common.errors.InvalidRequestException: Cannot update these configs dynamically: Set(num.partitions)"))
	run("--alter", "--broker", "0", "--delete-config", "log.retention.ms").Expect(t, 0,
		lines("Completed updating config for broker 0."), "")
	run("--describe", "--broker", "0").Expect(t, 0, lines("Dynamic configs for broker 0 are:"), "")
}

// Groups: KIP-848 group configs, bounded by the broker's group.* keys.
func TestGroupConfigs(t *testing.T) {
	addr, _ := newBroker(t)
	bs := []string{"--bootstrap-server", addr}
	run := func(args ...string) clikittest.Result { return runCmd(append(bs, args...)...) }

	run("--alter", "--entity-type", "groups", "--entity-name", "payments",
		"--add-config", "consumer.session.timeout.ms=50000,streams.num.standby.replicas=1").Expect(t, 0,
		lines("Completed updating config for group payments."), "")
	run("--describe", "--group", "payments").Expect(t, 0,
		lines("Dynamic configs for group payments are:",
			"  consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}",
			"  streams.num.standby.replicas=1 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:streams.num.standby.replicas=1, DEFAULT_CONFIG:group.streams.num.standby.replicas=0}"), "")
	run("--alter", "--group", "payments", "--add-config", "consumer.heartbeat.interval.ms=1").Expect(t, 1, "",
		lines("Error: Executing config command failed due to org.apache.kafka.common.errors.InvalidConfigurationException: consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."))
	run("--alter", "--group", "payments", "--delete-config", "consumer.session.timeout.ms,streams.num.standby.replicas").Expect(t, 0,
		lines("Completed updating config for group payments."), "")
	run("--describe", "--group", "payments").Expect(t, 0, lines("Dynamic configs for group payments are:"), "")
}
