package sharegroups

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// memberJSON is one member in the --describe --output json document.
type memberJSON struct {
	MemberID         string                  `json:"member_id"`
	ClientID         string                  `json:"client_id"`
	Host             string                  `json:"host"`
	RackID           *string                 `json:"rack_id"`
	MemberEpoch      int32                   `json:"member_epoch"`
	SubscribedTopics []string                `json:"subscribed_topics"`
	Assignment       []clikit.TopicPartition `json:"assignment"`
}

// offsetJSON is one share-partition in the --describe --output json document.
type offsetJSON struct {
	Topic       string  `json:"topic"`
	Partition   int32   `json:"partition"`
	LeaderEpoch *int32  `json:"leader_epoch"`
	StartOffset *int64  `json:"start_offset"`
	Lag         *int64  `json:"lag"`
	Error       *string `json:"error"`
}

type coordinatorJSON struct {
	ID   int32  `json:"id"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// describedJSON is one group in the --describe --output json document.
type describedJSON struct {
	Group           string           `json:"group"`
	Exists          bool             `json:"exists"`
	State           *string          `json:"state"`
	Coordinator     *coordinatorJSON `json:"coordinator"`
	GroupEpoch      *int32           `json:"group_epoch"`
	AssignmentEpoch *int32           `json:"assignment_epoch"`
	Assignor        *string          `json:"assignor"`
	Members         []memberJSON     `json:"members"`
	Offsets         []offsetJSON     `json:"offsets"`
	Error           *string          `json:"error"`
}

// describeCmd implements --describe (--offsets | --members [--verbose] | --state [--verbose]).
func (r *runner) describeCmd(parent context.Context) error {
	groups, err := r.groupIDs(parent)
	if err != nil {
		return err
	}
	sort.Strings(groups)
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	described, err := r.cl.Adm.DescribeShareGroups(ctx, groups...)
	if err != nil && described == nil {
		return err
	}
	docs := []describedJSON{}
	failed := 0
	for i, g := range groups {
		d := r.describeOne(parent, g, described[g])
		docs = append(docs, d)
		if d.Error != nil || !d.Exists {
			failed++
		}
		if r.json() {
			continue
		}
		if i > 0 {
			fmt.Fprintln(r.stdout)
		}
		r.printDescribed(d)
	}
	if r.json() {
		if err := r.writeJSON(docs); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("describing %d of %d share groups failed", failed, len(groups))}
	}
	return nil
}

func (r *runner) describeOne(parent context.Context, g string, d kadm.DescribedShareGroup) describedJSON {
	out := describedJSON{Group: g}
	if d.Err != nil {
		if errors.Is(d.Err, kerr.GroupIDNotFound) {
			return out
		}
		msg := clikit.ErrMessage(d.Err)
		out.Error = &msg
		return out
	}
	if d.GroupID == "" || d.GroupState == "Dead" {
		return out
	}
	out.Exists = true
	state, assignor := d.GroupState, d.Assignor
	out.State, out.Assignor = &state, &assignor
	out.GroupEpoch, out.AssignmentEpoch = &d.GroupEpoch, &d.AssignmentEpoch
	out.Coordinator = &coordinatorJSON{ID: d.Coordinator.NodeID, Host: d.Coordinator.Host, Port: d.Coordinator.Port}
	out.Members = []memberJSON{}
	for _, m := range d.Members {
		mj := memberJSON{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, RackID: m.RackID,
			MemberEpoch: m.MemberEpoch, SubscribedTopics: append([]string{}, m.SubscribedTopicNames...), Assignment: []clikit.TopicPartition{}}
		for t, ps := range m.Assignment {
			for p := range ps {
				mj.Assignment = append(mj.Assignment, clikit.TopicPartition{Topic: t, Partition: p})
			}
		}
		clikit.SortTopicPartitions(mj.Assignment)
		out.Members = append(out.Members, mj)
	}
	sort.Slice(out.Members, func(i, j int) bool { return out.Members[i].MemberID < out.Members[j].MemberID })
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	offs, err := r.cl.Adm.DescribeShareGroupOffsets(ctx, g)
	if err != nil {
		msg := clikit.ErrMessage(err)
		out.Error = &msg
		return out
	}
	out.Offsets = []offsetJSON{}
	for _, o := range offs[g].Offsets.Sorted() {
		oj := offsetJSON{Topic: o.Topic, Partition: o.Partition}
		if o.Err != nil {
			msg := clikit.ErrMessage(o.Err)
			oj.Error = &msg
		} else if o.StartOffset >= 0 {
			so, le := o.StartOffset, o.LeaderEpoch
			oj.StartOffset, oj.LeaderEpoch = &so, &le
			if o.Lag >= 0 {
				lag := o.Lag
				oj.Lag = &lag
			}
		}
		out.Offsets = append(out.Offsets, oj)
	}
	return out
}

func optInt32(v *int32) string {
	if v == nil {
		return clikit.Missing
	}
	return strconv.Itoa(int(*v))
}

// printDescribed prints one group in the selected view.
func (r *runner) printDescribed(d describedJSON) {
	if d.Error != nil {
		fmt.Fprintf(r.stderr, "Error: Describing share group '%s' failed due to %s\n", d.Group, *d.Error)
		return
	}
	if !d.Exists {
		fmt.Fprintf(r.stderr, "Error: Share group '%s' does not exist.\n", d.Group)
		return
	}
	switch {
	case r.o.stateSet:
		header := []string{"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"}
		row := []string{d.Group, fmt.Sprintf("%s:%d  (%d)", d.Coordinator.Host, d.Coordinator.Port, d.Coordinator.ID), *d.Assignor, *d.State, strconv.Itoa(len(d.Members))}
		if r.o.Verbose {
			header = append(header, "GROUP-EPOCH", "ASSIGNMENT-EPOCH")
			row = append(row, optInt32(d.GroupEpoch), optInt32(d.AssignmentEpoch))
		}
		writeTable(r.stdout, [][]string{header, row})
	case r.o.members:
		if len(d.Members) == 0 {
			fmt.Fprintf(r.stdout, "Share group '%s' has no active members.\n", d.Group)
			return
		}
		header := []string{"GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"}
		if r.o.Verbose {
			header = append(header, "MEMBER-EPOCH")
		}
		rows := [][]string{header}
		for _, m := range d.Members {
			row := []string{d.Group, m.MemberID, m.Host, m.ClientID, strconv.Itoa(len(m.Assignment)), assignmentText(m.Assignment)}
			if r.o.Verbose {
				row = append(row, strconv.Itoa(int(m.MemberEpoch)))
			}
			rows = append(rows, row)
		}
		writeTable(r.stdout, rows)
	default:
		if len(d.Offsets) == 0 {
			fmt.Fprintf(r.stdout, "Share group '%s' has no offset information.\n", d.Group)
			return
		}
		rows := [][]string{{"GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG"}}
		for _, o := range d.Offsets {
			rows = append(rows, []string{d.Group, o.Topic, strconv.Itoa(int(o.Partition)), optInt32(o.LeaderEpoch),
				clikit.OptInt(o.StartOffset), clikit.OptInt(o.Lag)})
		}
		writeTable(r.stdout, rows)
	}
}

// assignmentText renders an assignment as Kafka's tool does: topic:0,1;other:2.
func assignmentText(tps []clikit.TopicPartition) string {
	if len(tps) == 0 {
		return clikit.Missing
	}
	var parts []string
	for i := 0; i < len(tps); {
		j := i
		var ps []string
		for ; j < len(tps) && tps[j].Topic == tps[i].Topic; j++ {
			ps = append(ps, strconv.Itoa(int(tps[j].Partition)))
		}
		parts = append(parts, tps[i].Topic+":"+strings.Join(ps, ","))
		i = j
	}
	return strings.Join(parts, ";")
}
