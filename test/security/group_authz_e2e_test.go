package security

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumeAs joins group as user (SCRAM-SHA-256) with the classic protocol or KIP-848
// (server-side assignment), reads n records of topic from the committed offsets and commits;
// it returns the first error.
func consumeAs(t *testing.T, sb *secBroker, user, group, topic string, kip848 bool, n int) error {
	t.Helper()
	opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100 * time.Millisecond)}
	if kip848 {
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
	}
	cl := client(t, sb.SASLPlaintext, scram256(user, user+"-secret"), nil, opts...)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, e := range fs.Errors() {
			return e.Err
		}
		got += fs.NumRecords()
	}
	return cl.CommitUncommittedOffsets(ctx)
}

// TestConsumerGroupsWithConsumerACLs: a consumer group of either protocol (classic and KIP-848,
// franz-go) works end to end with exactly the ACLs `muster acls --add --consumer --group g
// --topic t` grants (READ on the group; READ and DESCRIBE on the topic), and fails cleanly, with
// Kafka's error, when the group READ or the topic READ is removed.
func TestConsumerGroupsWithConsumerACLs(t *testing.T) {
	sb := startSecure(t, "group.consumer.assignment.interval.ms=0")
	sb.createTopic(t, "orders", 2)
	admin := client(t, sb.SASLPlaintext, plainAuth("admin", "admin-secret"), nil)
	produce := func(n int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i := 0; i < n; i++ {
			if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One group per protocol, each with the --consumer ACLs.
	sb.acls(t, "--add", "--allow-principal", "User:alice", "--consumer", "--group", "g", "--group", "g848", "--topic", "orders").Expect(t, 0, "*", "")
	protocols := []struct {
		name, group string
		kip848      bool
	}{{"classic", "g", false}, {"kip848", "g848", true}}
	produce(10)
	for _, p := range protocols {
		if err := consumeAs(t, sb, "alice", p.group, "orders", p.kip848, 10); err != nil {
			t.Fatalf("%s consumer group with --consumer ACLs: %v", p.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := sb.admin(t).ListGroups(ctx)
	if err != nil || listed["g"].GroupType != "classic" || listed["g848"].GroupType != "consumer" {
		t.Fatalf("group types: %v %+v", err, listed)
	}
	removals := []struct {
		what     string
		resource []string
		want     *kerr.Error
	}{
		{"group READ", []string{"--group", "g", "--group", "g848"}, kerr.GroupAuthorizationFailed},
		{"topic READ", []string{"--topic", "orders"}, kerr.TopicAuthorizationFailed},
	}
	for _, r := range removals {
		sb.acls(t, append([]string{"--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read"}, r.resource...)...).Expect(t, 0, "*", "")
		produce(1)
		for _, p := range protocols {
			if err := consumeAs(t, sb, "alice", p.group, "orders", p.kip848, 1); !isErr(err, r.want) {
				t.Fatalf("%s consumer without %s: %v, want %v", p.name, r.what, err, r.want)
			}
		}
		sb.acls(t, append([]string{"--add", "--allow-principal", "User:alice", "--operation", "Read"}, r.resource...)...).Expect(t, 0, "*", "")
	}
	// All ACLs back: the groups resume where they committed.
	for _, p := range protocols {
		if err := consumeAs(t, sb, "alice", p.group, "orders", p.kip848, 2); err != nil {
			t.Fatalf("%s consumer group with the ACLs restored: %v", p.name, err)
		}
	}
}
