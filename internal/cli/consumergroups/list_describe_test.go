package consumergroups

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// groupsFixture: group1 and group2 are Empty classic groups with committed
// offsets; "live" is a Stable classic group with one member on topic foo.
func groupsFixture(t *testing.T) (*fixture, func()) {
	f := newFixture(t)
	f.commitGroup("group1", map[string]map[int32]int64{"test": {0: 4, 1: 5}, "foo": {0: 1}})
	f.commitGroup("group2", map[string]map[int32]int64{"test": {0: 10}})
	live := f.join("live", false, "foo")
	return f, live.Close
}

func TestList(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()

	f.run("--list").Expect(t, 0, lines("group1", "group2", "live"), "")
	f.run("--list", "--state").Expect(t, 0, lines(
		"GROUP                     STATE",
		"group1                    Empty",
		"group2                    Empty",
		"live                      Stable",
	), "")
	// "--state Stable" (space-separated) works like Kafka's optional value.
	f.run("--list", "--state", "stable").Expect(t, 0, lines(
		"GROUP                     STATE",
		"live                      Stable",
	), "")
	f.run("--list", "--state=Empty,Dead").Expect(t, 0, lines(
		"GROUP                     STATE",
		"group1                    Empty",
		"group2                    Empty",
	), "")
	f.run("--list", "--type").Expect(t, 0, lines(
		"GROUP                     TYPE",
		"group1                    Classic",
		"group2                    Classic",
		"live                      Classic",
	), "")
	f.run("--list", "--type", "classic", "--state").Expect(t, 0, lines(
		"GROUP                     TYPE                 STATE",
		"group1                    Classic              Empty",
		"group2                    Classic              Empty",
		"live                      Classic              Stable",
	), "")
	f.run("--list", "--type=consumer").Expect(t, 0, lines("GROUP                     TYPE"), "")

	r := f.run("--list", "--state", "--output", "json")
	r.Expect(t, 0, "*", "")
	var doc struct {
		Groups []listedGroup `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	want := []listedGroup{{"group1", "Classic", "Empty"}, {"group2", "Classic", "Empty"}, {"live", "Classic", "Stable"}}
	if fmt.Sprint(doc.Groups) != fmt.Sprint(want) {
		t.Errorf("json groups %v, want %v", doc.Groups, want)
	}
	f.run("--list", "--state=Reconciling", "--output", "json").Expect(t, 0, "{\n  \"groups\": []\n}\n", "")
}

func TestDescribeOffsetsEmptyGroup(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()

	// Seed 001: an Empty group's committed offsets are shown (read with
	// OffsetFetch, no dummy member) with LOG-END-OFFSET and LAG.
	want := lines(
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID",
		"group1          foo             0          1               3               2               -               -               -",
		"group1          test            0          4               10              6               -               -               -",
		"group1          test            1          5               5               0               -               -               -",
	)
	noMembers := "Consumer group 'group1' has no active members.\n"
	f.run("--describe", "--group", "group1").Expect(t, 0, want, noMembers)
	f.run("--describe", "--group", "group1", "--offsets").Expect(t, 0, want, noMembers)
	// kgo commits its member id as the offset metadata.
	rv := f.run("--describe", "--group", "group1", "--offsets", "--verbose")
	rv.Stdout = regexp.MustCompile(`client-group1-[0-9a-f-]+`).ReplaceAllString(rv.Stdout, "<member-id>")
	rv.Expect(t, 0, lines(
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LEADER-EPOCH    LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID       METADATA",
		"group1          foo             0          1               -               3               2               -               -               -               <member-id>",
		"group1          test            0          4               -               10              6               -               -               -               <member-id>",
		"group1          test            1          5               -               5               0               -               -               -               <member-id>",
	), noMembers)

	// Two groups: blocks separated by a blank line, sorted by group.
	f.run("--describe", "--group", "group2", "--group", "group1").Expect(t, 0, want+"\n"+lines(
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID",
		"group2          test            0          10              10              0               -               -               -",
	), noMembers+"Consumer group 'group2' has no active members.\n")

	// Members and state views of an Empty group.
	f.run("--describe", "--group", "group1", "--members").Expect(t, 0,
		lines("GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS"), noMembers)
	r := f.run("--describe", "--group", "group1", "--state")
	coord := fmt.Sprintf("%s  (0)", f.addr)
	r.Expect(t, 0, lines(
		row([]int{max(25, len(coord)), 25, 20, 15}, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
		row([]int{max(25, len(coord)), 25, 20, 15}, "group1", coord, "-", "Empty", "0"),
	), noMembers)
	if !strings.HasPrefix(r.Stdout, "GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS\n") {
		t.Errorf("state header %q", r.Stdout)
	}
}

func TestDescribeStableGroup(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()
	adm := kadm.NewClient(f.client())
	defer adm.Close()
	dg, err := adm.DescribeGroups(context.Background(), "live")
	if err != nil || len(dg["live"].Members) != 1 {
		t.Fatalf("describe live: %v %v", err, dg)
	}
	m := dg["live"].Members[0]
	cw, hw := max(15, len(m.MemberID)), max(15, len(m.ClientHost))

	f.run("--describe", "--group", "live").Expect(t, 0, lines(
		row([]int{15, 15, 10, 15, 15, 15, cw, hw}, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"),
		row([]int{15, 15, 10, 15, 15, 15, cw, hw}, "live", "foo", "0", "-", "3", "-", m.MemberID, m.ClientHost, "client-live"),
		row([]int{15, 15, 10, 15, 15, 15, cw, hw}, "live", "foo", "1", "-", "3", "-", m.MemberID, m.ClientHost, "client-live"),
	), "")
	f.run("--describe", "--group", "live", "--members").Expect(t, 0, lines(
		row([]int{15, cw, hw, 15, 15}, "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"),
		row([]int{15, cw, hw, 15, 15}, "live", m.MemberID, m.ClientHost, "client-live", "2"),
	), "")
	f.run("--describe", "--group", "live", "--members", "--verbose").Expect(t, 0, lines(
		row([]int{15, cw, hw, 15, 15}, "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"),
		row([]int{15, cw, hw, 15, 15}, "live", m.MemberID, m.ClientHost, "client-live", "2", "foo(0,1)"),
	), "")
	coord := fmt.Sprintf("%s  (0)", f.addr)
	f.run("--describe", "--group", "live", "--state").Expect(t, 0, lines(
		row([]int{max(25, len(coord)), 25, 20, 15}, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
		row([]int{max(25, len(coord)), 25, 20, 15}, "live", coord, "cooperative-sticky", "Stable", "1"),
	), "")

	r := f.run("--describe", "--group", "live", "--output", "json")
	r.Expect(t, 0, "*", "")
	var doc struct {
		Groups []describedGroupJSON `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Groups[0]
	if len(doc.Groups) != 1 || !g.Exists || *g.State != "Stable" || *g.Type != "classic" || len(g.Members) != 1 ||
		len(g.Offsets) != 2 || *g.Offsets[1].LogEndOffset != 3 || g.Offsets[1].CurrentOffset != nil || g.Error != nil {
		t.Errorf("json: %s", r.Stdout)
	}
}

func TestDescribeMissingGroup(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()
	f.run("--describe", "--group", "nope").Expect(t, 1, "", "Error: Consumer group 'nope' does not exist.\n")
	f.run("--describe", "--group", "nope", "--members").Expect(t, 1, "", "Error: Consumer group 'nope' does not exist.\n")
	// Other groups are still described; the exit code reports the failure.
	f.run("--describe", "--group", "nope", "--group", "group2").Expect(t, 1, lines(
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID",
		"group2          test            0          10              10              0               -               -               -",
	), "Consumer group 'group2' has no active members.\nError: Consumer group 'nope' does not exist.\n")
	r := f.run("--describe", "--group", "nope", "--output", "json")
	r.Expect(t, 1, "*", "Error: Consumer group 'nope' does not exist.\n")
	if !strings.Contains(r.Stdout, `"exists": false`) || !strings.Contains(r.Stdout, `"error": "Consumer group 'nope' does not exist."`) {
		t.Errorf("json: %s", r.Stdout)
	}
}

func TestDescribeAllGroups(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()
	r := f.run("--describe", "--all-groups", "--members")
	r.Expect(t, 0, "*", "Consumer group 'group1' has no active members.\nConsumer group 'group2' has no active members.\n")
	if n := strings.Count(r.Stdout, "GROUP "); n != 3 {
		t.Errorf("want 3 member tables, got %d:\n%s", n, r.Stdout)
	}
}

// A KIP-848 (consumer-type) group is described with ConsumerGroupDescribe.
func TestDescribeConsumerProtocolGroup(t *testing.T) {
	f := newFixture(t)
	cl := f.join("nextgen", true, "test")
	defer cl.Close()
	f.run("--list", "--type").Expect(t, 0, lines(
		"GROUP                     TYPE",
		"nextgen                   Consumer",
	), "")
	r := f.run("--describe", "--group", "nextgen", "--state", "--verbose")
	r.Expect(t, 0, "*", "*")
	if !strings.Contains(r.Stdout, "GROUP-EPOCH") || !strings.Contains(r.Stdout, "TARGET-ASSIGNMENT-EPOCH") {
		t.Errorf("state --verbose: %s", r.Stdout)
	}
	r = f.run("--describe", "--group", "nextgen", "--members", "--verbose")
	r.Expect(t, 0, "*", "*")
	if !strings.Contains(r.Stdout, "CURRENT-ASSIGNMENT") || !strings.Contains(r.Stdout, "client-nextgen") {
		t.Errorf("members --verbose: %s", r.Stdout)
	}
	r = f.run("--describe", "--group", "nextgen", "--output", "json")
	r.Expect(t, 0, "*", "*")
	if !strings.Contains(r.Stdout, `"type": "consumer"`) || !strings.Contains(r.Stdout, `"group_epoch": `) {
		t.Errorf("json: %s", r.Stdout)
	}
}
