package consumergroups

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/muster-io/muster/internal/testutil"
)

// onMuster switches newFixture from kfake to a real in-process muster broker
// (set only by TestAgainstMuster, which runs the other tests sequentially).
var onMuster bool

// newMusterFixture starts muster on loopback with the same topics and
// records as the kfake fixture: test (3 partitions: 10, 5, 0 records) and
// foo (2 partitions: 3, 3 records).
func newMusterFixture(t testing.TB) *fixture {
	t.Helper()
	b := testutil.Start(t)
	f := &fixture{t: t, mb: b, addr: b.Addr()}
	adm := kadm.NewClient(f.client())
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "foo"); err != nil {
		t.Fatal(err)
	}
	f.produce("test", map[int32]int{0: 10, 1: 5})
	f.produce("foo", map[int32]int{0: 3, 1: 3})
	return f
}

// TestAgainstMuster runs the command's end-to-end tests against muster
// instead of kfake: the tool's output must be the same on both.
func TestAgainstMuster(t *testing.T) {
	onMuster = true
	defer func() { onMuster = false }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"List", TestList},
		{"DescribeOffsetsEmptyGroup", TestDescribeOffsetsEmptyGroup},
		{"DescribeStableGroup", TestDescribeStableGroup},
		{"DescribeMissingGroup", TestDescribeMissingGroup},
		{"DescribeAllGroups", TestDescribeAllGroups},
		{"DescribeConsumerProtocolGroup", TestDescribeConsumerProtocolGroup},
		{"CommandConfigFile", TestCommandConfigFile},
		{"DeleteGroups", TestDeleteGroups},
		{"DeleteOffsets", TestDeleteOffsets},
		{"ResetOffsetsSpecifiers", TestResetOffsetsSpecifiers},
		{"ResetOffsetsExecuteExportFromFile", TestResetOffsetsExecuteExportFromFile},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// TestDescribeOffsetsMetadataOnMuster is seed 001 against muster: a group that
// only ever had offsets committed by an admin (no member, never joined) is
// described with its committed offsets, leader epochs and metadata, without
// the tool joining it.
func TestDescribeOffsetsMetadataOnMuster(t *testing.T) {
	f := newMusterFixture(t)
	// OffsetCommit at most v9: the commit names its topics (v10 names them by id).
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.OffsetCommit.Int16(), 9)
	cl := f.client(kgo.MaxVersions(vs))
	defer cl.Close()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = "admin-only", -1
	for _, c := range []struct {
		topic     string
		partition int32
		offset    int64
		epoch     int32
		metadata  string
	}{{"test", 0, 7, 3, "checkpoint-7"}, {"foo", 1, 2, -1, ""}} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = c.topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = c.partition, c.offset, c.epoch
		md := c.metadata
		rp.Metadata = &md
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("commit %s/%d: %d", rt.Topic, rp.Partition, rp.ErrorCode)
			}
		}
	}
	noMembers := "Consumer group 'admin-only' has no active members.\n"
	f.run("--describe", "--group", "admin-only", "--offsets", "--verbose").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LEADER-EPOCH    LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID       METADATA",
		"admin-only      foo             1          2               -               3               1               -               -               -               -",
		"admin-only      test            0          7               3               10              3               -               -               -               checkpoint-7",
	), noMembers)
	f.run("--describe", "--group", "admin-only").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID",
		"admin-only      foo             1          2               3               1               -               -               -",
		"admin-only      test            0          7               10              3               -               -               -",
	), noMembers)
	// Describing did not join: the group is still Empty and has no members.
	f.run("--describe", "--group", "admin-only", "--state").Expect(t, 0, "*", noMembers)
	f.run("--list", "--state").Expect(t, 0, lines(
		"GROUP                     STATE",
		"admin-only                Empty",
	), "")
}

// TestDeleteOffsetsNonEmptyOnMuster: a Stable classic group whose protocol
// type is not "consumer" refuses OffsetDelete at the group level
// (NON_EMPTY_GROUP), so the tool prints only the group error (seed 004).
func TestDeleteOffsetsNonEmptyOnMuster(t *testing.T) {
	f := newMusterFixture(t)
	f.commitGroup("group1", map[string]map[int32]int64{"test": {0: 4, 1: 5}})
	assigned := make(chan struct{}, 1)
	cl := f.client(kgo.ConsumerGroup("group1"), kgo.ConsumeTopics("test"), kgo.DisableAutoCommit(),
		kgo.GroupProtocol("connect"), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	defer cl.Close()
	go func() {
		for !cl.PollFetches(context.Background()).IsClientClosed() {
		}
	}()
	select {
	case <-assigned:
	case <-time.After(15 * time.Second):
		t.Fatal("no assignment")
	}
	f.run("--delete-offsets", "--group", "group1", "--topic", "test:0,1", "--topic", "foo").Expect(t, 1, "",
		"Error: Deletion of offsets failed due to: The group is not empty.\n")
	if c := f.committed("group1"); len(c["test"]) != 2 {
		t.Errorf("offsets deleted from a non-empty group: %v", c)
	}
}
