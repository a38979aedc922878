package consumergroups

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// describeView is the --describe sub-action.
type describeView int

const (
	viewOffsets describeView = iota
	viewMembers
	viewState
)

// describedGroupJSON is one group in the --describe --output json document.
// Offsets is present (possibly empty) for the offsets view and null
// otherwise; every other key is always present.
type describedGroupJSON struct {
	Group                 string       `json:"group"`
	Exists                bool         `json:"exists"`
	Type                  *string      `json:"type"`
	State                 *string      `json:"state"`
	ProtocolType          *string      `json:"protocol_type"`
	AssignmentStrategy    *string      `json:"assignment_strategy"`
	Coordinator           *coordinator `json:"coordinator"`
	GroupEpoch            *int32       `json:"group_epoch"`
	TargetAssignmentEpoch *int32       `json:"target_assignment_epoch"`
	Members               []memberDesc `json:"members"`
	Offsets               []offsetRow  `json:"offsets"`
	Error                 *string      `json:"error"`
}

// describeCmd implements --describe (--offsets | --members [--verbose] | --state).
func (r *runner) describeCmd(ctx context.Context) error {
	view := viewOffsets
	switch {
	case r.o.members:
		view = viewMembers
	case r.o.stateSet:
		view = viewState
	}
	groups, descs, err := r.describeSelected(ctx)
	if err != nil {
		return err
	}
	failed := 0
	var docs []describedGroupJSON
	blocks := 0
	for _, g := range groups {
		gd := descs[g]
		var rows []offsetRow
		if gd.Err == nil && gd.Exists && view == viewOffsets {
			rows, gd.Err = r.collectOffsets(ctx, gd)
		}
		if r.json() {
			docs = append(docs, toJSON(gd, rows, view))
		}
		switch {
		case gd.Err != nil:
			failed++
			clikit.PrintError(r.stderr, "Describing consumer group '%s' failed due to %s", g, clikit.ErrMessage(gd.Err))
			continue
		case !gd.Exists:
			failed++
			clikit.PrintError(r.stderr, "Consumer group '%s' does not exist.", g)
			continue
		}
		r.stateNotice(gd)
		if r.json() {
			continue
		}
		var lines []string
		switch view {
		case viewOffsets:
			lines = r.offsetLines(gd, rows)
		case viewMembers:
			lines = r.memberLines(gd)
		case viewState:
			lines = r.stateLines(gd)
		}
		if len(lines) == 0 {
			continue
		}
		if blocks > 0 {
			fmt.Fprintln(r.stdout)
		}
		blocks++
		for _, l := range lines {
			fmt.Fprintln(r.stdout, l)
		}
	}
	if r.json() {
		if docs == nil {
			docs = []describedGroupJSON{}
		}
		if err := writeJSON(r.stdout, struct {
			Groups []describedGroupJSON `json:"groups"`
		}{docs}); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("describing %d of %d consumer groups failed", failed, len(groups))}
	}
	return nil
}

// stateNotice prints Kafka's stderr notes for Empty and rebalancing groups.
func (r *runner) stateNotice(gd *groupDesc) {
	switch gd.State {
	case "Empty":
		fmt.Fprintf(r.stderr, "Consumer group '%s' has no active members.\n", gd.Group)
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		fmt.Fprintf(r.stderr, "Warning: Consumer group '%s' is rebalancing.\n", gd.Group)
	}
}

func toJSON(gd *groupDesc, rows []offsetRow, view describeView) describedGroupJSON {
	d := describedGroupJSON{Group: gd.Group, Exists: gd.Exists, Members: []memberDesc{}, Error: errString(gd.Err)}
	if gd.Err == nil && !gd.Exists {
		d.Error = ptr(fmt.Sprintf("Consumer group '%s' does not exist.", gd.Group))
	}
	if gd.Exists {
		d.Type, d.State, d.ProtocolType = ptr(gd.Type), ptr(gd.State), ptr(gd.ProtocolType)
		d.AssignmentStrategy = ptr(gd.AssignmentStrategy)
		d.Coordinator = ptr(gd.Coordinator)
		d.GroupEpoch, d.TargetAssignmentEpoch = gd.GroupEpoch, gd.AssignmentEpoch
		for _, m := range gd.Members {
			if m.Assignment == nil {
				m.Assignment = []clikit.TopicPartition{}
			}
			if m.TargetAssignment == nil && gd.Type == "consumer" {
				m.TargetAssignment = []clikit.TopicPartition{}
			}
			d.Members = append(d.Members, m)
		}
	}
	if view == viewOffsets && gd.Exists && gd.Err == nil {
		d.Offsets = rows
		if d.Offsets == nil {
			d.Offsets = []offsetRow{}
		}
	}
	return d
}

// offsetLines renders Kafka's offsets table: GROUP TOPIC PARTITION
// CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID (widths
// max(15, longest) for group, topic, consumer id, host; 10 for partition; 15
// for the numbers). --verbose adds LEADER-EPOCH after CURRENT-OFFSET (Kafka
// 4.x) and METADATA, the committed metadata string ("-" when empty), at the
// end (seed 001). No rows, no table.
func (r *runner) offsetLines(gd *groupDesc, rows []offsetRow) []string {
	if len(rows) == 0 {
		return nil
	}
	gw, tw, cw, hw := maxLen(15, gd.Group), 15, 15, 15
	for _, rw := range rows {
		tw, cw, hw = maxLen(tw, rw.Topic), maxLen(cw, rw.ConsumerID), maxLen(hw, rw.Host)
	}
	verbose := r.o.Verbose
	widths := []int{gw, tw, 10, 15}
	header := []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET"}
	if verbose {
		widths = append(widths, 15)
		header = append(header, "LEADER-EPOCH")
	}
	widths = append(widths, 15, 15, cw, hw, 0)
	header = append(header, "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	if verbose {
		// Seed 001: the committed offset's metadata is shown too (last column).
		iw := 15
		for _, rw := range rows {
			iw = maxLen(iw, rw.ClientID)
		}
		widths[len(widths)-1] = iw
		widths = append(widths, 0)
		header = append(header, "METADATA")
	}
	lines := []string{row(widths, header...)}
	for _, rw := range rows {
		cols := []string{gd.Group, rw.Topic, strconv.Itoa(int(rw.Partition)), clikit.OptInt(rw.CurrentOffset)}
		if verbose {
			le := clikit.Missing
			if rw.LeaderEpoch != nil {
				le = strconv.Itoa(int(*rw.LeaderEpoch))
			}
			cols = append(cols, le)
		}
		cols = append(cols, clikit.OptInt(rw.LogEndOffset), clikit.OptInt(rw.Lag), rw.ConsumerID, rw.Host, rw.ClientID)
		if verbose {
			md := clikit.Missing
			if rw.Metadata != nil && *rw.Metadata != "" {
				md = *rw.Metadata
			}
			cols = append(cols, md)
		}
		lines = append(lines, row(widths, cols...))
	}
	return lines
}

// formatAssignment renders "topic(0,1), other(2)" sorted by topic and
// partition, or "-" when empty.
func formatAssignment(tps []clikit.TopicPartition) string {
	if len(tps) == 0 {
		return clikit.Missing
	}
	byTopic := map[string][]int{}
	var topics []string
	for _, tp := range tps {
		if _, ok := byTopic[tp.Topic]; !ok {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], int(tp.Partition))
	}
	sort.Strings(topics)
	parts := make([]string, len(topics))
	for i, t := range topics {
		ps := byTopic[t]
		sort.Ints(ps)
		s := make([]string, len(ps))
		for j, p := range ps {
			s[j] = strconv.Itoa(p)
		}
		parts[i] = t + "(" + strings.Join(s, ",") + ")"
	}
	return strings.Join(parts, ", ")
}

// memberLines renders Kafka's members table: GROUP CONSUMER-ID
// [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS [ASSIGNMENT] (widths
// max(15, longest), instance id max(17, longest), #PARTITIONS 15).
// GROUP-INSTANCE-ID appears only if a member has one; ASSIGNMENT with
// --verbose. For KIP-848 groups --verbose shows CURRENT-EPOCH,
// CURRENT-ASSIGNMENT, TARGET-EPOCH and TARGET-ASSIGNMENT instead (Kafka 4.x).
// The header is printed even when the group has no members, as Kafka does.
func (r *runner) memberLines(gd *groupDesc) []string {
	gw, cw, iw, hw, lw := maxLen(15, gd.Group), 15, 17, 15, 15
	withInstance := false
	for _, m := range gd.Members {
		cw, hw, lw = maxLen(cw, m.MemberID), maxLen(hw, m.Host), maxLen(lw, m.ClientID)
		if m.GroupInstanceID != nil && *m.GroupInstanceID != "" {
			withInstance = true
			iw = maxLen(iw, *m.GroupInstanceID)
		}
	}
	verbose := r.o.Verbose
	kip848 := gd.Type == "consumer"
	widths := []int{gw, cw}
	header := []string{"GROUP", "CONSUMER-ID"}
	if withInstance {
		widths = append(widths, iw)
		header = append(header, "GROUP-INSTANCE-ID")
	}
	widths = append(widths, hw, lw, 15)
	header = append(header, "HOST", "CLIENT-ID", "#PARTITIONS")
	var curW, tgtW int
	if verbose && kip848 {
		curW, tgtW = 25, 25
		for _, m := range gd.Members {
			curW, tgtW = maxLen(curW, formatAssignment(m.Assignment)), maxLen(tgtW, formatAssignment(m.TargetAssignment))
		}
		widths = append(widths, 15, curW, 15, 0)
		header = append(header, "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")
	} else if verbose {
		widths = append(widths, 0)
		header = append(header, "ASSIGNMENT")
	}
	lines := []string{row(widths, header...)}
	for _, m := range gd.Members {
		cols := []string{gd.Group, m.MemberID}
		if withInstance {
			inst := ""
			if m.GroupInstanceID != nil {
				inst = *m.GroupInstanceID
			}
			cols = append(cols, inst)
		}
		cols = append(cols, m.Host, m.ClientID, strconv.Itoa(len(m.Assignment)))
		if verbose && kip848 {
			epoch := clikit.Missing
			if m.MemberEpoch != nil {
				epoch = strconv.Itoa(int(*m.MemberEpoch))
			}
			tgtEpoch := clikit.Missing
			if gd.AssignmentEpoch != nil {
				tgtEpoch = strconv.Itoa(int(*gd.AssignmentEpoch))
			}
			cols = append(cols, epoch, formatAssignment(m.Assignment), tgtEpoch, formatAssignment(m.TargetAssignment))
		} else if verbose {
			cols = append(cols, formatAssignment(m.Assignment))
		}
		lines = append(lines, row(widths, cols...))
	}
	return lines
}

// stateLines renders Kafka's state table: GROUP COORDINATOR (ID)
// ASSIGNMENT-STRATEGY STATE #MEMBERS. Kafka sizes the first column by the
// coordinator text, max(25, len("host:port  (id)")), and the coordinator
// column at 25; we keep that and only widen the first column for longer group
// ids. --verbose on KIP-848 groups adds GROUP-EPOCH and
// TARGET-ASSIGNMENT-EPOCH before #MEMBERS (Kafka 4.x).
func (r *runner) stateLines(gd *groupDesc) []string {
	coord := fmt.Sprintf("%s:%d  (%d)", gd.Coordinator.Host, gd.Coordinator.Port, gd.Coordinator.ID)
	first := maxLen(maxLen(25, coord), gd.Group)
	widths := []int{first, 25, 20, 15}
	header := []string{"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"}
	strategy := gd.AssignmentStrategy
	if strategy == "" {
		strategy = clikit.Missing
	}
	cols := []string{gd.Group, coord, strategy, gd.State}
	if r.o.Verbose && gd.Type == "consumer" {
		widths = append(widths, 15, 25)
		header = append(header, "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH")
		cols = append(cols, strconv.Itoa(int(*gd.GroupEpoch)), strconv.Itoa(int(*gd.AssignmentEpoch)))
	}
	widths = append(widths, 0)
	header = append(header, "#MEMBERS")
	cols = append(cols, strconv.Itoa(len(gd.Members)))
	return []string{row(widths, header...), row(widths, cols...)}
}
