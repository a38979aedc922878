package consumergroups

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// resetOffset is one planned partition offset.
type resetOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	NewOffset int64  `json:"new_offset"`
}

// groupReset is the outcome for one group.
type groupReset struct {
	Group   string        `json:"group"`
	State   string        `json:"state"`
	Offsets []resetOffset `json:"offsets"`
	Error   *string       `json:"error"`
	planned bool
}

// resetOffsetsCmd implements --reset-offsets. Each group must be inactive
// (Empty, or Dead / non-existent) else Kafka's "Assignments can only be reset
// if the group 'g' is inactive, but the current state is S." is printed and
// the command exits 1. The plan is printed as GROUP TOPIC PARTITION
// NEW-OFFSET (30/30/10/15), or as CSV with --export; --execute commits it
// with OffsetCommit (generation -1, no member), --dry-run (default) does not.
func (r *runner) resetOffsetsCmd(ctx context.Context) error {
	dry := !r.o.execute
	if !r.o.dryRun && !r.o.execute {
		fmt.Fprintln(r.stderr, "WARN: No action will be performed as the --execute option is missing. "+
			"In a future major release, the default behavior of this command will be to prompt the user before "+
			"executing the reset rather than doing a dry run. You should add the --dry-run option explicitly "+
			"if you are scripting this command and want to keep the current default behavior without prompting.")
	}
	var plan resetPlan
	if r.o.fromFile != "" {
		f, err := os.Open(r.o.fromFile)
		if err != nil {
			return usagef("Cannot read --from-file: %v", err)
		}
		plan, err = parseResetPlan(f)
		f.Close()
		if err != nil {
			return err
		}
		if _, ok := plan[""]; ok && (r.o.allGroups || len(r.o.groups) != 1) {
			return usagef("The reset plan in '%s' has no group column; it can only be used with exactly one --group", r.o.fromFile)
		}
	}
	groups, descs, err := r.describeSelected(ctx)
	if err != nil {
		return err
	}
	var results []groupReset
	failed := 0
	for _, g := range groups {
		gd := descs[g]
		res := groupReset{Group: g, State: gd.State, Offsets: []resetOffset{}}
		err := gd.Err
		if err == nil {
			switch gd.State {
			case "Empty", "Dead":
				res.planned = true
				var offs map[clikit.TopicPartition]int64
				offs, err = r.prepareReset(ctx, g, plan)
				if err == nil && !dry {
					err = r.commit(ctx, g, offs)
				}
				if err == nil {
					for tp, o := range offs {
						res.Offsets = append(res.Offsets, resetOffset{tp.Topic, tp.Partition, o})
					}
					sort.Slice(res.Offsets, func(i, j int) bool {
						a, b := res.Offsets[i], res.Offsets[j]
						if a.Topic != b.Topic {
							return a.Topic < b.Topic
						}
						return a.Partition < b.Partition
					})
				}
			default:
				msg := fmt.Sprintf("Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", g, gd.State)
				clikit.PrintError(r.stderr, "%s", msg)
				res.Error = ptr(msg)
				failed++
			}
		}
		if err != nil {
			if _, ok := err.(*usageError); ok {
				return err
			}
			clikit.PrintError(r.stderr, "Resetting offsets of consumer group '%s' failed due to %s", g, clikit.ErrMessage(err))
			res.Error = ptr(clikit.ErrMessage(err))
			res.planned = false
			failed++
		}
		results = append(results, res)
	}
	switch {
	case r.json():
		if results == nil {
			results = []groupReset{}
		}
		if err := writeJSON(r.stdout, struct {
			DryRun bool         `json:"dry_run"`
			Groups []groupReset `json:"groups"`
		}{dry, results}); err != nil {
			return err
		}
	case r.o.export:
		withGroup := r.o.allGroups || len(r.o.groups) != 1
		for _, res := range results {
			for _, o := range res.Offsets {
				if withGroup {
					fmt.Fprintf(r.stdout, "%s,%s,%d,%d\n", res.Group, o.Topic, o.Partition, o.NewOffset)
				} else {
					fmt.Fprintf(r.stdout, "%s,%d,%d\n", o.Topic, o.Partition, o.NewOffset)
				}
			}
		}
	default:
		widths := []int{30, 30, 10, 0}
		header := false
		for _, res := range results {
			if !res.planned {
				continue
			}
			if !header {
				writeRow(r.stdout, widths, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
				header = true
			}
			for _, o := range res.Offsets {
				writeRow(r.stdout, widths, res.Group, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.NewOffset, 10))
			}
		}
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("resetting offsets failed for %d of %d consumer groups", failed, len(groups))}
	}
	return nil
}

// partitionsToReset resolves the scope: --all-topics (the group's committed
// partitions), --topic (explicit partitions, or all partitions of the topic
// from metadata; an unknown topic is an error).
func (r *runner) partitionsToReset(ctx context.Context, group string) ([]clikit.TopicPartition, error) {
	var out []clikit.TopicPartition
	if r.o.allTopics {
		committed, err := r.fetchCommitted(ctx, group)
		if err != nil {
			return nil, err
		}
		committed.Each(func(o kadm.OffsetResponse) {
			out = append(out, clikit.TopicPartition{Topic: o.Topic, Partition: o.Partition})
		})
		clikit.SortTopicPartitions(out)
		return out, nil
	}
	args, _ := clikit.ParseTopicArgs(r.o.topics)
	seen := map[clikit.TopicPartition]bool{}
	addTP := func(tp clikit.TopicPartition) {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	var whole []string
	for _, a := range args {
		if a.Whole() {
			whole = appendUnique(whole, a.Topic)
		}
		for _, p := range a.Partitions {
			addTP(clikit.TopicPartition{Topic: a.Topic, Partition: p})
		}
	}
	if len(whole) > 0 {
		c, cancel := r.cl.Ctx(ctx)
		tds, err := r.cl.Adm.ListTopics(c, whole...)
		cancel()
		if err != nil {
			return nil, err
		}
		for _, t := range whole {
			td, ok := tds[t]
			if !ok {
				return nil, kerr.UnknownTopicOrPartition
			}
			if td.Err != nil {
				return nil, td.Err
			}
			for _, p := range td.Partitions.Numbers() {
				addTP(clikit.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	clikit.SortTopicPartitions(out)
	return out, nil
}

// prepareReset computes the new offsets for one group per the specifier.
func (r *runner) prepareReset(ctx context.Context, group string, plan resetPlan) (map[clikit.TopicPartition]int64, error) {
	o := r.o
	if o.fromFile != "" {
		p, ok := plan[group]
		if !ok {
			p, ok = plan[""]
		}
		if !ok {
			return nil, fmt.Errorf("No reset plan for group %s found", group)
		}
		return r.clamp(ctx, p)
	}
	tps, err := r.partitionsToReset(ctx, group)
	if err != nil {
		return nil, err
	}
	out := map[clikit.TopicPartition]int64{}
	switch {
	case o.ToOffsetSet:
		for _, tp := range tps {
			out[tp] = o.ToOffset
		}
		return r.clamp(ctx, out)
	case o.ShiftBySet:
		committed, err := r.fetchCommitted(ctx, group)
		if err != nil {
			return nil, err
		}
		for _, tp := range tps {
			c, ok := committed.Lookup(tp.Topic, tp.Partition)
			if !ok || c.At < 0 {
				return nil, usagef("Cannot shift offset for partition %s-%d since there is no current committed offset", tp.Topic, tp.Partition)
			}
			out[tp] = c.At + o.ShiftBy
		}
		return r.clamp(ctx, out)
	case o.ToEarliest, o.ToLatest:
		listed, err := r.listOffsets(ctx, tps, o.ToLatest)
		if err != nil {
			return nil, err
		}
		for _, tp := range tps {
			v, ok := listed[tp]
			if !ok {
				return nil, usagef("Error getting %s offset of topic partition: %s-%d", clikit.Pick(o.ToLatest, "ending", "starting"), tp.Topic, tp.Partition)
			}
			out[tp] = v
		}
		return out, nil
	case o.ToCurrent:
		committed, err := r.fetchCommitted(ctx, group)
		if err != nil {
			return nil, err
		}
		var without []clikit.TopicPartition
		for _, tp := range tps {
			if c, ok := committed.Lookup(tp.Topic, tp.Partition); ok && c.At >= 0 {
				out[tp] = c.At
			} else {
				without = append(without, tp)
			}
		}
		ends, err := r.listOffsets(ctx, without, true)
		if err != nil {
			return nil, err
		}
		for _, tp := range without {
			v, ok := ends[tp]
			if !ok {
				return nil, usagef("Error getting ending offset of topic partition: %s-%d", tp.Topic, tp.Partition)
			}
			out[tp] = v
		}
		return out, nil
	default: // --to-datetime, --by-duration
		ts, _, err := o.TimeMillis(r.env.Loc, r.env.Now())
		if err != nil {
			return nil, err
		}
		return r.offsetsForTime(ctx, tps, ts)
	}
}

// offsetsForTime lists the first offset at or after ts (ListOffsets by
// timestamp); partitions without such a record fall back to the log end
// offset with Kafka's warning.
func (r *runner) offsetsForTime(parent context.Context, tps []clikit.TopicPartition, ts int64) (map[clikit.TopicPartition]int64, error) {
	out := map[clikit.TopicPartition]int64{}
	if len(tps) == 0 {
		return out, nil
	}
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	listed, err := r.cl.Adm.ListOffsetsAfterMilli(ctx, ts, topicsOf(tps)...)
	if err != nil && listed == nil {
		return nil, err
	}
	for _, tp := range tps {
		l, ok := listed.Lookup(tp.Topic, tp.Partition)
		if !ok || l.Err != nil || l.Offset < 0 {
			return nil, usagef("Error getting offset by timestamp of topic partition: %s-%d", tp.Topic, tp.Partition)
		}
		if l.Timestamp < 0 {
			fmt.Fprintf(r.stderr, "Warn: Partition %d from topic %s is empty. Falling back to latest known offset.\n", tp.Partition, tp.Topic)
		}
		out[tp] = l.Offset
	}
	return out, nil
}

// clamp bounds requested offsets to [log start, log end] like Kafka's
// checkOffsetsRange (with --verbose, a note is printed for each change).
func (r *runner) clamp(ctx context.Context, req map[clikit.TopicPartition]int64) (map[clikit.TopicPartition]int64, error) {
	tps := make([]clikit.TopicPartition, 0, len(req))
	for tp := range req {
		tps = append(tps, tp)
	}
	clikit.SortTopicPartitions(tps)
	starts, err := r.listOffsets(ctx, tps, false)
	if err != nil {
		return nil, err
	}
	ends, err := r.listOffsets(ctx, tps, true)
	if err != nil {
		return nil, err
	}
	out := make(map[clikit.TopicPartition]int64, len(req))
	for _, tp := range tps {
		v := req[tp]
		end, okEnd := ends[tp]
		if !okEnd {
			return nil, usagef("Error getting ending offset of topic partition: %s-%d", tp.Topic, tp.Partition)
		}
		switch start, okStart := starts[tp]; {
		case v > end:
			if r.o.Verbose {
				fmt.Fprintf(r.stderr, "New offset (%d) is higher than latest offset for topic partition %s-%d. Value will be set to %d\n", v, tp.Topic, tp.Partition, end)
			}
			v = end
		case okStart && v < start:
			if r.o.Verbose {
				fmt.Fprintf(r.stderr, "New offset (%d) is lower than earliest offset for topic partition %s-%d. Value will be set to %d\n", v, tp.Topic, tp.Partition, start)
			}
			v = start
		}
		out[tp] = v
	}
	return out, nil
}

// commit writes the offsets with OffsetCommit as an admin (no member).
func (r *runner) commit(parent context.Context, group string, offs map[clikit.TopicPartition]int64) error {
	if len(offs) == 0 {
		return nil
	}
	os := make(kadm.Offsets)
	for tp, o := range offs {
		os.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: o, LeaderEpoch: -1})
	}
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	resps, err := r.cl.Adm.CommitOffsets(ctx, group, os)
	if err != nil {
		return err
	}
	return resps.Error()
}
