package streamsgroups

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/streams/topology"
	"github.com/muster-io/muster/streams/member"
)

func TestListAndDescribe(t *testing.T) {
	f := newFixture(t)
	m := f.join("app")

	f.run("--list").Expect(t, 0, "app\n", "")
	f.run("--list", "--state").Expect(t, 0, lines("GROUP           STATE", "app             Stable"), "")
	f.run("--list", "--state", "Empty,notready").Expect(t, 0, "GROUP           STATE\n", "")

	f.run("--describe", "--group", "app").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       OFFSET-LAG",
		"app             counts          0               3",
		"app             counts          1               -",
		"app             words           0               6",
		"app             words           1               -",
		"app             words           2               -"), "")
	f.run("--describe", "--group", "app", "--offsets", "--verbose").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       CURRENT-OFFSET  LEADER-EPOCH    LOG-END-OFFSET  OFFSET-LAG",
		"app             counts          0               1               -               4               3",
		"app             counts          1               -               -               0               -",
		"app             words           0               4               -               10              6",
		"app             words           1               -               -               5               -",
		"app             words           2               -               -               0               -"), "")

	r := f.run("--describe", "--group", "app", "--members")
	r.Expect(t, 0, "*", "")
	out := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(out) != 2 || !strings.HasPrefix(out[0], "GROUP           MEMBER") ||
		!strings.HasPrefix(out[1], "app             "+m.MemberID()+" ") ||
		!strings.HasSuffix(out[1], " muster-streams-member ACTIVE: 0:[0,1,2] 1:[0,1];") {
		t.Errorf("--members:\n%s", r.Stdout)
	}
	r = f.run("--describe", "--group", "app", "--members", "--verbose")
	if r.Code != 0 || !strings.Contains(r.Stdout, "MEMBER-PROTOCOL") ||
		!strings.Contains(r.Stdout, " streams ") || !strings.HasSuffix(r.Stdout, "ACTIVE: 0:[0,1,2] 1:[0,1]; TARGET-ACTIVE: 0:[0,1,2] 1:[0,1];\n") {
		t.Errorf("--members --verbose (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	r = f.run("--describe", "--group", "app", "--state")
	r.Expect(t, 0, "*", "")
	out = strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(out) != 2 || !strings.HasPrefix(out[0], "GROUP           COORDINATOR (ID)") ||
		!strings.Contains(out[1], "  (0)") || !strings.HasSuffix(out[1], "Stable          1") {
		t.Errorf("--state:\n%s", r.Stdout)
	}
	r = f.run("--describe", "--group", "app", "--state", "--verbose")
	if r.Code != 0 || !strings.Contains(r.Stdout, "GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH #MEMBERS") {
		t.Errorf("--state --verbose (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	f.run("--describe", "--group", "nope").Expect(t, 1, "", "Error: Streams group 'nope' does not exist.\n")
	// Every group is attempted; one failure fails the command.
	r = f.run("--describe", "--group", "nope", "--group", "app", "--state")
	if r.Code != 1 || !strings.Contains(r.Stdout, "Stable") || r.Stderr != "Error: Streams group 'nope' does not exist.\n" {
		t.Errorf("mixed describe (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	f.run("--describe", "--all-groups", "--state").Expect(t, 0, "*", "")

	// An active group refuses resets, offset deletion and deletion.
	f.run("--reset-offsets", "--group", "app", "--all-input-topics", "--to-earliest", "--dry-run").Expect(t, 1, "",
		"Error: Assignments can only be reset if the group 'app' is inactive, but the current state is Stable.\n")
	f.run("--delete-offsets", "--group", "app", "--all-input-topics").Expect(t, 1, "",
		"Error: Deleting offsets of a streams group 'app' is forbidden if the group is not empty.\n")
	r = f.run("--delete", "--group", "app")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "Error: Deletion of some streams groups failed:\n* Group 'app' could not be deleted due to: NON_EMPTY_GROUP") {
		t.Errorf("delete active group (%d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestResetDeleteOffsetsAndDelete(t *testing.T) {
	f := newFixture(t)
	f.leave(f.join("app"))

	f.run("--describe", "--group", "app").Expect(t, 0, "*", "Streams group 'app' has no active members.\n")
	f.run("--describe", "--group", "app", "--members").Expect(t, 0, "", "Streams group 'app' has no active members.\n")

	f.run("--reset-offsets", "--group", "app", "--all-input-topics", "--to-earliest", "--dry-run").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       NEW-OFFSET",
		"app             counts          0               0",
		"app             words           0               0"), "")
	f.run("--reset-offsets", "--group", "app", "--all-input-topics", "--to-latest", "--dry-run", "--export").Expect(t, 0, lines(
		"counts,0,4",
		"words,0,10"), "")
	if got := f.committed("app"); got["words"][0] != 4 || got["counts"][0] != 1 {
		t.Fatalf("dry run changed offsets: %v", got)
	}
	f.run("--reset-offsets", "--group", "app", "--input-topic", "words", "--to-datetime", "2025-06-01T11:59:55.000", "--execute").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       NEW-OFFSET",
		"app             words           0               5",
		"app             words           1               5",
		"app             words           2               0"), "")
	f.run("--reset-offsets", "--group", "app", "--input-topic", "counts:0", "--shift-by", "10", "--execute").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       NEW-OFFSET",
		"app             counts          0               4"), "")
	f.run("--reset-offsets", "--group", "app", "--input-topic", "words:1", "--by-duration", "PT18S", "--execute").Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION       NEW-OFFSET",
		"app             words           1               2"), "")
	got := f.committed("app")
	if got["words"][0] != 5 || got["words"][1] != 2 || got["words"][2] != 0 || got["counts"][0] != 4 {
		t.Fatalf("after reset: %v", got)
	}

	f.run("--delete-offsets", "--group", "app", "--input-topic", "counts").Expect(t, 0, lines(
		"Request succeed for deleting offsets from group app.",
		"TOPIC           PARTITION       STATUS",
		"counts          0               Successful",
		"counts          1               Successful"), "")
	if got := f.committed("app"); len(got["counts"]) != 0 {
		t.Fatalf("counts offsets survive deletion: %v", got)
	}

	r := f.run("--delete", "--group", "app", "--group", "nope")
	r.Expect(t, 1, "These streams groups were deleted successfully: 'app'\n", lines(
		"Error: Deletion of some streams groups failed:",
		"* Group 'nope' could not be deleted due to: GROUP_ID_NOT_FOUND: Group 'nope' is not a streams group or does not exist."))
	f.run("--list").Expect(t, 0, "", "")
}

// TestTopologyNotAvailable: a group whose description was never pushed
// (the broker has no plugin) is NOT_STORED: exit 1 and KIP-1331's message.
// A broker without the KIP-1331 describe path answers NOT_REQUESTED, also
// exit 1.
func TestTopologyNotAvailable(t *testing.T) {
	f := newFixture(t)
	f.join("app")
	r := f.run("--describe", "--group", "app", "--topology")
	notStored := "Error: No topology description is stored for streams group 'app'.\n"
	notRequested := "Error: The broker did not return a topology description for streams group 'app' (status NOT_REQUESTED).\n"
	if r.Code != 1 || r.Stdout != "" || (r.Stderr != notStored && r.Stderr != notRequested) {
		t.Errorf("--topology (%d):\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	f.run("--describe", "--group", "nope", "--topology").Expect(t, 1, "", "Error: Streams group 'nope' does not exist.\n")
}

func wordCountDescription(t *testing.T) *topology.Description {
	t.Helper()
	d, err := topology.NewBuilder().
		Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"words"}, "KSTREAM-AGGREGATE-0000000001").
		Processor("KSTREAM-AGGREGATE-0000000001", []string{"counts-store"}, "KSTREAM-SINK-0000000002").
		Sink("KSTREAM-SINK-0000000002", "counts").
		Done().
		Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTopologyAvailable pushes a description through a real member
// (KIP-1331) and prints it in all three formats. It needs a broker serving
// StreamsGroupTopologyDescriptionUpdate (API key 93) with the in-memory
// plugin and is skipped until the broker advertises the key.
func TestTopologyAvailable(t *testing.T) {
	f := newFixture(t, "group.streams.topology.description.plugin.class=memory")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	versions, err := f.adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	supported := false
	versions.Each(func(v kadm.BrokerApiVersions) {
		if _, ok := v.KeyMaxVersion(93); ok {
			supported = true
		}
	})
	if !supported {
		t.Fatal("the broker does not advertise KIP-1331 StreamsGroupTopologyDescriptionUpdate (key 93)")
	}
	desc := wordCountDescription(t)
	m, err := member.Start(member.Config{
		Brokers: []string{f.addr}, GroupID: "wc",
		Topology: member.Topology{Subtopologies: []member.Subtopology{{ID: "0", SourceTopics: []string{"words"},
			StateChangelogTopics: []member.TopicInfo{{Name: "wc-counts-store-changelog"}}}}},
		TopologyDescription: desc,
		RetryBackoff:        20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for m.Stats().TopologyPushes == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("description never pushed (stats %+v)", m.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.run("--describe", "--group", "wc", "--topology").Expect(t, 0, topology.Text(desc), "")
	f.run("--describe", "--group", "wc", "--topology", "--format", "dot").Expect(t, 0, ensureNL(topology.Dot(desc)), "")
	f.run("--describe", "--group", "wc", "--topology", "--format", "mermaid").Expect(t, 0, ensureNL(topology.Mermaid(desc)), "")
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// TestRenderTopology covers every TopologyDescriptionStatus of a
// StreamsGroupDescribe v1 group.
func TestRenderTopology(t *testing.T) {
	desc := wordCountDescription(t)
	group := func(status int8, withDesc bool) *describedGroup {
		g := kmsg.NewStreamsGroupDescribeResponseGroup()
		g.Group = "wc"
		g.TopologyDescriptionStatus = status
		if withDesc {
			g.TopologyDescription = desc.ToDescribe()
		}
		return &describedGroup{StreamsGroupDescribeResponseGroup: g, version: 1}
	}
	for _, tc := range []struct {
		name, format   string
		g              *describedGroup
		stdout, stderr string
		fails          bool
	}{
		{"available text", "text", group(statusAvailable, true), topology.Text(desc), "", false},
		{"available dot", "dot", group(statusAvailable, true), ensureNL(topology.Dot(desc)), "", false},
		{"available mermaid", "mermaid", group(statusAvailable, true), ensureNL(topology.Mermaid(desc)), "", false},
		{"not stored", "text", group(statusNotStored, false), "", "Error: No topology description is stored for streams group 'wc'.\n", true},
		{"error", "text", group(statusError, false), "", "Error: The broker failed to fetch the topology description for streams group 'wc'. See the broker logs for details.\n", true},
		{"available without description", "text", group(statusAvailable, false), "", "Error: The broker reported an available topology description for streams group 'wc' but sent none.\n", true},
		{"v0 broker", "text", func() *describedGroup { g := group(statusAvailable, true); g.version = 0; return g }(), "",
			"Error: The broker does not support topology descriptions (StreamsGroupDescribe v1, KIP-1331).\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			err := renderTopology(&out, &errb, tc.g, tc.format)
			if (err != nil) != tc.fails || out.String() != tc.stdout || errb.String() != tc.stderr {
				t.Errorf("err %v\nstdout %q\nwant   %q\nstderr %q\nwant   %q", err, out.String(), tc.stdout, errb.String(), tc.stderr)
			}
		})
	}
	g := group(statusAvailable, true)
	g.ErrorCode = 30 // GROUP_AUTHORIZATION_FAILED
	if err := renderTopology(&strings.Builder{}, &strings.Builder{}, g, "text"); err == nil {
		t.Error("group error code accepted")
	}
}
