package consumergroups

import (
	"fmt"
	"strings"
	"testing"
)

func TestDeleteGroups(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()

	f.run("--delete", "--group", "group1", "--group", "group2").Expect(t, 0,
		"Deletion of requested consumer groups ('group1, group2') was successful.\n", "")
	f.run("--list").Expect(t, 0, lines("live"), "")

	r := f.run("--delete", "--group", "live", "--group", "ghost")
	r.Expect(t, 1, "", lines(
		"Error: Deletion of some consumer groups failed:",
		"* Group 'ghost' could not be deleted due to: GROUP_ID_NOT_FOUND: The group id does not exist.",
		"* Group 'live' could not be deleted due to: NON_EMPTY_GROUP: The group is not empty.",
	))

	f.commitGroup("group3", map[string]map[int32]int64{"foo": {1: 2}})
	r = f.run("--delete", "--all-groups", "--output", "json")
	r.Expect(t, 1, "*", "*")
	want := `{
  "deleted": [
    "group3"
  ],
  "failed": [
    {
      "group": "live",
      "error": "NON_EMPTY_GROUP: The group is not empty."
    }
  ]
}
`
	if r.Stdout != want {
		t.Errorf("json:\n%s\nwant:\n%s", r.Stdout, want)
	}
}

func TestDeleteOffsets(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()

	// Seed 004, group-level error: only the error line.
	f.run("--delete-offsets", "--group", "unknown", "--topic", "test:0,1", "--topic", "foo").Expect(t, 1, "",
		"Error: Deletion of offsets failed due to: The group id does not exist.\n")

	// Seed 004, table: a topic without partitions is one "Not Provided" row.
	f.run("--delete-offsets", "--group", "group1", "--topic", "test:0,1", "--topic", "foo").Expect(t, 0, lines(
		"TOPIC                          PARTITION       STATUS",
		"foo                            Not Provided    Successful",
		"test                           0               Successful",
		"test                           1               Successful",
	), "")
	if c := f.committed("group1"); len(c) != 0 {
		t.Errorf("offsets left after delete: %v", c)
	}

	// Partition-level errors: the live group is subscribed to foo
	// (GROUP_SUBSCRIBED_TO_TOPIC), nosuch does not exist.
	f.run("--delete-offsets", "--group", "live", "--topic", "foo", "--topic", "test:0", "--topic", "nosuch").Expect(t, 1, lines(
		"TOPIC                          PARTITION       STATUS",
		"foo                            Not Provided    Error: The consumer group is actively subscribed to the topic",
		"nosuch                         Not Provided    Error: This server does not host this topic-partition.",
		"test                           0               Successful",
	), "Error: Deletion of offsets failed for 2 of 3 topic partitions.\n")
	f.run("--delete-offsets", "--group", "live", "--topic", "foo:1").Expect(t, 1, lines(
		"TOPIC                          PARTITION       STATUS",
		"foo                            1               Error: The consumer group is actively subscribed to the topic",
	), "Error: Deletion of offsets failed for 1 of 1 topic partitions.\n")

	r := f.run("--delete-offsets", "--group", "group2", "--topic", "test:0", "--output", "json")
	want := `{
  "group": "group2",
  "error": null,
  "partitions": [
    {
      "topic": "test",
      "partition": 0,
      "status": "Successful",
      "error": null
    }
  ]
}
`
	r.Expect(t, 0, want, "")
	r = f.run("--delete-offsets", "--group", "unknown", "--topic", "foo", "--output", "json")
	r.Expect(t, 1, "*", "Error: Deletion of offsets failed due to: The group id does not exist.\n")
	if !strings.Contains(r.Stdout, `"error": "The group id does not exist."`) {
		t.Errorf("json: %s", r.Stdout)
	}
	_ = fmt.Sprint
}
