package streamsgroups

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// describeCmd implements --describe with --offsets (default), --members or
// --state for each group. Every group is attempted; the command fails if
// any failed.
func (r *runner) describeCmd(ctx context.Context) error {
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return err
	}
	failed := 0
	for _, g := range groups {
		if err := r.describeOne(ctx, g); err != nil {
			r.printFailure(err)
			failed++
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("describing %d of %d streams groups failed", failed, len(groups))}
	}
	return nil
}

// describeGroup describes g and turns group-level errors into messages.
func (r *runner) describeGroup(ctx context.Context, g string, withTopology bool) (*describedGroup, error) {
	d, err := r.cl.describe(ctx, g, withTopology)
	if err != nil {
		return nil, err
	}
	if err := d.groupErr(); err != nil {
		if errors.Is(err, kerr.GroupIDNotFound) {
			return nil, clikit.Reportf(r.stderr, "Streams group '%s' does not exist.", g)
		}
		return nil, err
	}
	return d, nil
}

func (r *runner) describeOne(ctx context.Context, g string) error {
	d, err := r.describeGroup(ctx, g, false)
	if err != nil {
		return err
	}
	switch {
	case r.o.stateSet:
		r.printState(d)
		return nil
	case r.o.members:
		r.printMembers(d)
		return nil
	default:
		return r.printOffsets(ctx, d)
	}
}

// emptyNotice prints Kafka's stderr notices for groups without members and
// reports whether there are members to show.
func (r *runner) emptyNotice(d *describedGroup) bool {
	switch {
	case d.State == "Dead":
		fmt.Fprintf(r.stderr, "Streams group '%s' does not exist.\n", d.Group)
		return false
	case len(d.Members) == 0:
		fmt.Fprintf(r.stderr, "Streams group '%s' has no active members.\n", d.Group)
		return false
	case d.State == "Assigning" || d.State == "Reconciling":
		fmt.Fprintf(r.stderr, "Warning: Streams group '%s' is rebalancing.\n", d.Group)
	}
	return true
}

// printState prints "GROUP COORDINATOR (ID) ASSIGNOR STATE #MEMBERS"; with
// --verbose GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH come before #MEMBERS.
func (r *runner) printState(d *describedGroup) {
	r.emptyNotice(d)
	assignor := clikit.Missing
	if d.AssignorName != nil && *d.AssignorName != "" {
		assignor = *d.AssignorName
	}
	header := []string{"GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE"}
	row := []string{d.Group, d.coord.String(), assignor, d.State}
	if r.o.Verbose {
		header = append(header, "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH")
		row = append(row, strconv.Itoa(int(d.Epoch)), strconv.Itoa(int(d.AssignmentEpoch)))
	}
	header = append(header, "#MEMBERS")
	row = append(row, strconv.Itoa(len(d.Members)))
	writeTable(r.stdout, [][]string{header, row})
}

// formatTasks renders "0:[0,1] 1:[2]" for a task list, subtopologies and
// partitions sorted.
func formatTasks(ts []kmsg.TaskIDs) string {
	sorted := append([]kmsg.TaskIDs(nil), ts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].SubtopologyID < sorted[j].SubtopologyID })
	var parts []string
	for _, t := range sorted {
		ps := append([]int32(nil), t.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		strs := make([]string, len(ps))
		for i, p := range ps {
			strs[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t.SubtopologyID+":["+strings.Join(strs, ",")+"]")
	}
	return strings.Join(parts, " ")
}

// formatAssignment renders "ACTIVE: 0:[0,1]; STANDBY: 1:[0]; WARMUP: ...;"
// with prefix ("" or "TARGET-") for the kinds that are not empty.
func formatAssignment(prefix string, a kmsg.StreamsAssignment) string {
	var b strings.Builder
	for _, k := range []struct {
		name  string
		tasks []kmsg.TaskIDs
	}{{"ACTIVE", a.ActiveTasks}, {"STANDBY", a.StandbyTasks}, {"WARMUP", a.WarmupTasks}} {
		if len(k.tasks) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s%s: %s;", prefix, k.name, formatTasks(k.tasks))
	}
	return b.String()
}

// printMembers prints "GROUP MEMBER PROCESS CLIENT-ID ASSIGNMENTS"; with
// --verbose "GROUP TARGET-ASSIGNMENT-EPOCH TOPOLOGY-EPOCH MEMBER
// MEMBER-PROTOCOL MEMBER-EPOCH PROCESS CLIENT-ID ASSIGNMENTS" including the
// target assignment. Members are sorted by member id.
func (r *runner) printMembers(d *describedGroup) {
	if !r.emptyNotice(d) {
		return
	}
	members := append([]kmsg.StreamsGroupDescribeResponseGroupMember(nil), d.Members...)
	sort.Slice(members, func(i, j int) bool { return members[i].MemberID < members[j].MemberID })
	var rows [][]string
	if r.o.Verbose {
		rows = append(rows, []string{"GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER", "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"})
	} else {
		rows = append(rows, []string{"GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"})
	}
	for _, m := range members {
		asg := formatAssignment("", m.Assignment)
		if r.o.Verbose {
			if t := formatAssignment("TARGET-", m.TargetAssignment); t != "" {
				asg = strings.TrimSpace(asg + " " + t)
			}
		}
		if asg == "" {
			asg = clikit.Missing
		}
		if r.o.Verbose {
			proto := "streams"
			if m.IsClassic {
				proto = "classic"
			}
			rows = append(rows, []string{d.Group, strconv.Itoa(int(d.AssignmentEpoch)), strconv.Itoa(int(m.TopologyEpoch)), m.MemberID, proto,
				strconv.Itoa(int(m.MemberEpoch)), m.ProcessID, m.ClientID, asg})
		} else {
			rows = append(rows, []string{d.Group, m.MemberID, m.ProcessID, m.ClientID, asg})
		}
	}
	writeTable(r.stdout, rows)
}

// inputTopics are the topics a streams group reads: source topics and
// repartition source topics of its topology, sorted.
func inputTopics(d *describedGroup) []string {
	set := map[string]bool{}
	if d.Topology != nil {
		for _, s := range d.Topology.Subtopologies {
			for _, t := range s.SourceTopics {
				set[t] = true
			}
			for _, t := range s.RepartitionSourceTopics {
				set[t.Topic] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// offsetRow is one partition of --offsets.
type offsetRow struct {
	tp          clikit.TopicPartition
	committed   *int64
	leaderEpoch *int32
	end         *int64
}

// groupOffsets collects, for every partition of the group's input topics
// and every partition with a committed offset, the committed and log-end
// offsets.
func (r *runner) groupOffsets(parent context.Context, d *describedGroup) ([]offsetRow, error) {
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	committed, err := r.cl.Adm.FetchOffsets(ctx, d.Group)
	if err != nil {
		return nil, err
	}
	rows := map[clikit.TopicPartition]*offsetRow{}
	get := func(tp clikit.TopicPartition) *offsetRow {
		if rows[tp] == nil {
			rows[tp] = &offsetRow{tp: tp}
		}
		return rows[tp]
	}
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 {
			return
		}
		row := get(clikit.TopicPartition{Topic: o.Topic, Partition: o.Partition})
		at, le := o.At, o.LeaderEpoch
		row.committed, row.leaderEpoch = &at, &le
	})
	topics := inputTopics(d)
	for t := range committed {
		topics = append(topics, t)
	}
	if len(topics) > 0 {
		ends, err := r.cl.Adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return nil, err
		}
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				return
			}
			row := get(clikit.TopicPartition{Topic: o.Topic, Partition: o.Partition})
			end := o.Offset
			row.end = &end
		})
	}
	var out []offsetRow
	var tps []clikit.TopicPartition
	for tp := range rows {
		tps = append(tps, tp)
	}
	clikit.SortTopicPartitions(tps)
	for _, tp := range tps {
		out = append(out, *rows[tp])
	}
	return out, nil
}

// printOffsets prints "GROUP TOPIC PARTITION OFFSET-LAG"; with --verbose
// "GROUP TOPIC PARTITION CURRENT-OFFSET LEADER-EPOCH LOG-END-OFFSET
// OFFSET-LAG". Missing values are "-".
func (r *runner) printOffsets(ctx context.Context, d *describedGroup) error {
	rows, err := r.groupOffsets(ctx, d)
	if err != nil {
		return err
	}
	if len(d.Members) == 0 && d.State != "Dead" {
		fmt.Fprintf(r.stderr, "Streams group '%s' has no active members.\n", d.Group)
	} else if !r.emptyNotice(d) {
		return nil
	}
	table := [][]string{{"GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"}}
	if r.o.Verbose {
		table[0] = []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH", "LOG-END-OFFSET", "OFFSET-LAG"}
	}
	for _, row := range rows {
		lag := clikit.Missing
		if row.committed != nil && row.end != nil {
			lag = strconv.FormatInt(max(*row.end-*row.committed, 0), 10)
		}
		if r.o.Verbose {
			le := clikit.Missing
			if row.leaderEpoch != nil && *row.leaderEpoch >= 0 {
				le = strconv.Itoa(int(*row.leaderEpoch))
			}
			table = append(table, []string{d.Group, row.tp.Topic, strconv.Itoa(int(row.tp.Partition)), clikit.OptInt(row.committed), le, clikit.OptInt(row.end), lag})
		} else {
			table = append(table, []string{d.Group, row.tp.Topic, strconv.Itoa(int(row.tp.Partition)), lag})
		}
	}
	writeTable(r.stdout, table)
	return nil
}
