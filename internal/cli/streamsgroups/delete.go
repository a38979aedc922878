package streamsgroups

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
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
	var deleted []string
	var failed []clikit.GroupFailure
	var toDelete []string
	for _, g := range groups {
		d, err := r.cl.describe(parent, g, false)
		switch {
		case err != nil:
			failed = append(failed, clikit.GroupFailure{Group: g, Error: clikit.ErrMessage(err)})
		case d.groupErr() != nil && kerr.ErrorForCode(d.ErrorCode) == kerr.GroupIDNotFound:
			failed = append(failed, clikit.GroupFailure{Group: g, Error: fmt.Sprintf("GROUP_ID_NOT_FOUND: Group '%s' is not a streams group or does not exist.", g)})
		case d.groupErr() != nil:
			failed = append(failed, clikit.GroupFailure{Group: g, Error: clikit.ErrMessage(d.groupErr())})
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
				failed = append(failed, clikit.GroupFailure{Group: g, Error: "no result from the broker"})
			case res.Err != nil:
				failed = append(failed, clikit.GroupFailure{Group: g, Error: clikit.DeleteErrText(res.Err, res.ErrMessage)})
			default:
				deleted = append(deleted, g)
			}
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].Group < failed[j].Group })
	return clikit.ReportDeleteGroups(r.stdout, r.stderr, "streams", deleted, failed, false)
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
		return clikit.Reportf(r.stderr, "Deleting offsets of a streams group '%s' is forbidden if the group is not empty.", g)
	}
	tps, err := r.scopePartitions(parent, d)
	if err != nil {
		return err
	}
	if len(tps) == 0 {
		return clikit.Reportf(r.stderr, "Streams group '%s' has no committed offsets to delete.", g)
	}
	set := kadm.TopicsSet{}
	for _, tp := range tps {
		set.Add(tp.Topic, tp.Partition)
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
		if e, _ := resps.Lookup(tp.Topic, tp.Partition); e != nil {
			status = "Error: " + clikit.ErrMessage(e)
			failed++
		}
		rows = append(rows, []string{tp.Topic, strconv.Itoa(int(tp.Partition)), status})
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
func (r *runner) scopePartitions(parent context.Context, d *describedGroup) ([]clikit.TopicPartition, error) {
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	var out []clikit.TopicPartition
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
				out = append(out, clikit.TopicPartition{Topic: o.Topic, Partition: o.Partition})
			}
		})
		clikit.SortTopicPartitions(out)
		return out, nil
	}
	return clikit.PartitionsOfTopicArgs(ctx, r.cl.Adm, r.o.inputTopics)
}
