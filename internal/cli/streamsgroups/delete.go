package streamsgroups

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// deleteCmd implements --delete with DeleteGroups. Only streams groups are
// deleted (a group of another type is reported, as Kafka's tool does), and
// the broker refuses non-empty groups (NON_EMPTY_GROUP). Messages follow
// kafka-streams-groups.sh: "Deletion of requested streams groups ('g1, g2')
// was successful." or "Error: Deletion of some streams groups failed:" and
// one "* Group 'g' could not be deleted due to: <error>" line per failure.
func (r *runner) deleteCmd(parent context.Context) error {
	groups, err := r.groupIDs(parent)
	if err != nil {
		return err
	}
	sort.Strings(groups)
	type failure struct{ group, err string }
	var deleted []string
	var failed []failure
	var toDelete []string
	for _, g := range groups {
		d, err := r.cl.describe(parent, g, false)
		switch {
		case err != nil:
			failed = append(failed, failure{g, errMessage(err)})
		case d.groupErr() != nil && kerr.ErrorForCode(d.ErrorCode) == kerr.GroupIDNotFound:
			failed = append(failed, failure{g, fmt.Sprintf("GROUP_ID_NOT_FOUND: Group '%s' is not a streams group or does not exist.", g)})
		case d.groupErr() != nil:
			failed = append(failed, failure{g, errMessage(d.groupErr())})
		default:
			toDelete = append(toDelete, g)
		}
	}
	if len(toDelete) > 0 {
		ctx, cancel := r.cl.Ctx(parent)
		defer cancel()
		resps, err := r.cl.Adm.DeleteGroups(ctx, toDelete...)
		if err != nil && resps == nil {
			return err
		}
		for _, g := range toDelete {
			res, ok := resps[g]
			switch {
			case !ok:
				failed = append(failed, failure{g, "no result from the broker"})
			case res.Err != nil:
				failed = append(failed, failure{g, deleteErrText(res.Err, res.ErrMessage)})
			default:
				deleted = append(deleted, g)
			}
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].group < failed[j].group })
	if len(failed) == 0 {
		fmt.Fprintf(r.stdout, "Deletion of requested streams groups ('%s') was successful.\n", strings.Join(deleted, ", "))
		return nil
	}
	fmt.Fprintln(r.stderr, "Error: Deletion of some streams groups failed:")
	for _, f := range failed {
		fmt.Fprintf(r.stderr, "* Group '%s' could not be deleted due to: %s\n", f.group, f.err)
	}
	if len(deleted) > 0 {
		fmt.Fprintf(r.stdout, "These streams groups were deleted successfully: '%s'\n", strings.Join(deleted, "', '"))
	}
	return &reportedError{Msg: fmt.Sprintf("deletion of %d streams groups failed", len(failed))}
}

// deleteErrText renders "ERROR_NAME: message".
func deleteErrText(err error, brokerMsg string) string {
	if ke, ok := err.(*kerr.Error); ok {
		msg := ke.Description
		if brokerMsg != "" {
			msg = brokerMsg
		}
		return ke.Message + ": " + msg
	}
	return err.Error()
}

// deleteOffsetsCmd implements --delete-offsets --group g (--input-topic
// t[:p,...] | --all-input-topics) with OffsetDelete (KIP-496). The group
// must be inactive.
func (r *runner) deleteOffsetsCmd(parent context.Context) error {
	g := r.o.groups[0]
	d, err := r.describeGroup(parent, g, false)
	if err != nil {
		return err
	}
	if d.State != "Empty" && d.State != "Dead" {
		return reportf(r.stderr, "Deleting offsets of a streams group '%s' is forbidden if the group is not empty.", g)
	}
	tps, err := r.scopePartitions(parent, d)
	if err != nil {
		return err
	}
	if len(tps) == 0 {
		return reportf(r.stderr, "Streams group '%s' has no committed offsets to delete.", g)
	}
	set := kadm.TopicsSet{}
	for _, tp := range tps {
		set.Add(tp.topic, tp.partition)
	}
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	resps, err := r.cl.Adm.DeleteOffsets(ctx, g, set)
	if err != nil {
		return err
	}
	failed := 0
	rows := [][]string{{"TOPIC", "PARTITION", "STATUS"}}
	for _, tp := range tps {
		status := "Successful"
		if e, _ := resps.Lookup(tp.topic, tp.partition); e != nil {
			status = "Error: " + errMessage(e)
			failed++
		}
		rows = append(rows, []string{tp.topic, strconv.Itoa(int(tp.partition)), status})
	}
	if failed > 0 {
		fmt.Fprintln(r.stderr, "Error: Encounter some partition level error, see the follow-up details:")
	} else {
		fmt.Fprintf(r.stdout, "Request succeed for deleting offsets from group %s.\n", g)
	}
	writeTable(r.stdout, rows)
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("deleting %d offsets failed", failed)}
	}
	return nil
}

// scopePartitions resolves --input-topic / --all-input-topics for group d:
// --all-input-topics means every partition with a committed offset of the
// group's input topics (or, without a topology, of any topic); an
// --input-topic without partitions means all its partitions.
func (r *runner) scopePartitions(parent context.Context, d *describedGroup) ([]topicPartition, error) {
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	var out []topicPartition
	if r.o.allInputTopics {
		committed, err := r.cl.Adm.FetchOffsets(ctx, d.Group)
		if err != nil {
			return nil, err
		}
		inputs := map[string]bool{}
		for _, t := range inputTopics(d) {
			inputs[t] = true
		}
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && (len(inputs) == 0 || inputs[o.Topic]) {
				out = append(out, topicPartition{o.Topic, o.Partition})
			}
		})
		sortTPs(out)
		return out, nil
	}
	args, _ := parseTopicArgs(r.o.inputTopics) // validated already
	var whole []string
	for _, a := range args {
		if len(a.partitions) == 0 {
			whole = append(whole, a.topic)
		}
		for _, p := range a.partitions {
			out = append(out, topicPartition{a.topic, p})
		}
	}
	if len(whole) > 0 {
		md, err := r.cl.Adm.ListTopics(ctx, whole...)
		if err != nil {
			return nil, err
		}
		for _, t := range whole {
			td, ok := md[t]
			if !ok || td.Err != nil {
				return nil, fmt.Errorf("topic '%s' does not exist", t)
			}
			for p := range td.Partitions {
				out = append(out, topicPartition{t, p})
			}
		}
	}
	sortTPs(out)
	return slices.Compact(out), nil
}
