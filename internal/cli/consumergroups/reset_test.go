package consumergroups

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const resetHeader = "GROUP                          TOPIC                          PARTITION  NEW-OFFSET"

func resetRows(rows ...[4]string) string {
	ls := []string{resetHeader}
	for _, r := range rows {
		ls = append(ls, row([]int{30, 30, 10}, r[0], r[1], r[2], r[3]))
	}
	return lines(ls...)
}

// group1 commits: foo 0=1, test 0=4, test 1=5. Log ends: foo 3/3, test
// 10/5/0; record i has timestamp baseTS+i s; the test clock is baseTS+10s.
func TestResetOffsetsSpecifiers(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()
	dry := "--dry-run"
	g := func(tp, p, o string) [4]string { return [4]string{"group1", tp, p, o} }

	for _, tc := range []struct {
		name   string
		args   []string
		want   string
		stderr string
	}{
		{"earliest", []string{"--all-topics", "--to-earliest"}, resetRows(g("foo", "0", "0"), g("test", "0", "0"), g("test", "1", "0")), ""},
		{"latest", []string{"--all-topics", "--to-latest"}, resetRows(g("foo", "0", "3"), g("test", "0", "10"), g("test", "1", "5")), ""},
		{"current", []string{"--all-topics", "--to-current"}, resetRows(g("foo", "0", "1"), g("test", "0", "4"), g("test", "1", "5")), ""},
		// --to-current on a partition without a commit uses the log end.
		{"current uncommitted", []string{"--topic", "foo", "--to-current"}, resetRows(g("foo", "0", "1"), g("foo", "1", "3")), ""},
		// --to-offset and --shift-by are clamped to [log start, log end].
		{"to-offset", []string{"--all-topics", "--to-offset", "7"}, resetRows(g("foo", "0", "3"), g("test", "0", "7"), g("test", "1", "5")), ""},
		{"shift-by", []string{"--all-topics", "--shift-by", "-2"}, resetRows(g("foo", "0", "0"), g("test", "0", "2"), g("test", "1", "3")), ""},
		{"topic scope", []string{"--topic", "test:1", "--topic", "foo", "--to-earliest"}, resetRows(g("foo", "0", "0"), g("foo", "1", "0"), g("test", "1", "0")), ""},
		{"to-datetime", []string{"--all-topics", "--to-datetime", "2025-06-01T12:00:03.000Z"},
			resetRows(g("foo", "0", "3"), g("test", "0", "3"), g("test", "1", "3")),
			"Warn: Partition 0 from topic foo is empty. Falling back to latest known offset.\n"},
		{"to-datetime no zone", []string{"--all-topics", "--to-datetime", "2025-06-01T12:00:03.000"},
			resetRows(g("foo", "0", "3"), g("test", "0", "3"), g("test", "1", "3")),
			"Warn: Partition 0 from topic foo is empty. Falling back to latest known offset.\n"},
		{"by-duration", []string{"--all-topics", "--by-duration", "PT7S"},
			resetRows(g("foo", "0", "3"), g("test", "0", "3"), g("test", "1", "3")),
			"Warn: Partition 0 from topic foo is empty. Falling back to latest known offset.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--reset-offsets", "--group", "group1", dry}, tc.args...)
			f.run(args...).Expect(t, 0, tc.want, tc.stderr)
		})
	}
	// Nothing was committed by the dry runs.
	want := map[string]map[int32]int64{"foo": {0: 1}, "test": {0: 4, 1: 5}}
	if c := f.committed("group1"); !reflect.DeepEqual(c, want) {
		t.Errorf("committed after dry runs %v, want %v", c, want)
	}
}

func TestResetOffsetsExecuteExportFromFile(t *testing.T) {
	f, stop := groupsFixture(t)
	defer stop()

	// Default is a dry run, with Kafka's warning.
	r := f.run("--reset-offsets", "--group", "group1", "--all-topics", "--to-latest")
	r.Expect(t, 0, "*", "*")
	if !strings.HasPrefix(r.Stderr, "WARN: No action will be performed as the --execute option is missing.") {
		t.Errorf("stderr %q", r.Stderr)
	}

	// Export: topic,partition,offset for one group.
	f.run("--reset-offsets", "--group", "group1", "--all-topics", "--to-earliest", "--dry-run", "--export").Expect(t, 0,
		lines("foo,0,0", "test,0,0", "test,1,0"), "")
	// With several groups the group column is added.
	f.run("--reset-offsets", "--all-groups", "--topic", "test:0", "--to-offset", "2", "--dry-run", "--export").Expect(t, 1,
		lines("group1,test,0,2", "group2,test,0,2"),
		"Error: Assignments can only be reset if the group 'live' is inactive, but the current state is Stable.\n")

	// Execute commits.
	f.run("--reset-offsets", "--group", "group1", "--all-topics", "--shift-by", "1", "--execute").Expect(t, 0,
		resetRows([4]string{"group1", "foo", "0", "2"}, [4]string{"group1", "test", "0", "5"}, [4]string{"group1", "test", "1", "5"}), "")
	want := map[string]map[int32]int64{"foo": {0: 2}, "test": {0: 5, 1: 5}}
	if c := f.committed("group1"); !reflect.DeepEqual(c, want) {
		t.Errorf("committed %v, want %v", c, want)
	}

	// --from-file with the 3-column export format, clamped to the log end.
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.csv")
	if err := os.WriteFile(plan, []byte("test,0,2\nfoo,0,9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.run("--reset-offsets", "--group", "group2", "--from-file", plan, "--execute").Expect(t, 0,
		resetRows([4]string{"group2", "foo", "0", "3"}, [4]string{"group2", "test", "0", "2"}), "")
	want = map[string]map[int32]int64{"foo": {0: 3}, "test": {0: 2}}
	if c := f.committed("group2"); !reflect.DeepEqual(c, want) {
		t.Errorf("committed %v, want %v", c, want)
	}
	// 4-column format: per-group plans; a new (Dead) group can be seeded.
	if err := os.WriteFile(plan, []byte("fresh,test,1,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.run("--reset-offsets", "--group", "fresh", "--from-file", plan, "--execute").Expect(t, 0,
		resetRows([4]string{"fresh", "test", "1", "3"}), "")
	if c := f.committed("fresh"); !reflect.DeepEqual(c, map[string]map[int32]int64{"test": {1: 3}}) {
		t.Errorf("fresh committed %v", c)
	}

	// Active groups are refused with Kafka's message.
	f.run("--reset-offsets", "--group", "live", "--all-topics", "--to-earliest", "--execute").Expect(t, 1, "",
		"Error: Assignments can only be reset if the group 'live' is inactive, but the current state is Stable.\n")

	// JSON document.
	r = f.run("--reset-offsets", "--group", "group2", "--topic", "test:0", "--to-latest", "--dry-run", "--output", "json")
	r.Expect(t, 0, `{
  "dry_run": true,
  "groups": [
    {
      "group": "group2",
      "state": "Empty",
      "offsets": [
        {
          "topic": "test",
          "partition": 0,
          "new_offset": 10
        }
      ],
      "error": null
    }
  ]
}
`, "")

	// Unknown topic in scope is a runtime error.
	f.run("--reset-offsets", "--group", "group2", "--topic", "nosuch", "--to-latest", "--dry-run").Expect(t, 1, "",
		"Error: Resetting offsets of consumer group 'group2' failed due to This server does not host this topic-partition.\n")
}

func TestCommandConfigFile(t *testing.T) {
	f := newFixture(t)
	cfg := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(cfg, []byte("client.id=admin\nssl.truststore.location=/nonexistent\nrequest.timeout.ms=1000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.run("--list", "--command-config", cfg).Expect(t, 0, "", "")
	f.run("--list", "--command-config", filepath.Join(t.TempDir(), "missing")).Expect(t, 1, "", "*")
}
