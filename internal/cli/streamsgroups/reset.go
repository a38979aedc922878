package streamsgroups

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// resetCmd implements --reset-offsets for each group: the group must be
// inactive (Empty or Dead, as in Kafka's tools); the new offsets are
// printed as "GROUP TOPIC PARTITION NEW-OFFSET" and, with --execute,
// committed. Every new offset is clamped to [log start, log end].
func (r *runner) resetCmd(ctx context.Context) error {
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return err
	}
	sort.Strings(groups)
	rows := [][]string{{"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"}}
	var csv []string
	failed := 0
	for _, g := range groups {
		offs, err := r.resetOne(ctx, g)
		if err != nil {
			if _, ok := err.(*reportedError); !ok {
				fmt.Fprintf(r.stderr, "Error: Resetting offsets of streams group '%s' failed due to %s\n", g, clikit.ErrMessage(err))
			}
			failed++
			continue
		}
		for _, o := range offs {
			rows = append(rows, []string{g, o.tp.Topic, strconv.Itoa(int(o.tp.Partition)), strconv.FormatInt(o.offset, 10)})
			line := fmt.Sprintf("%s,%d,%d", o.tp.Topic, o.tp.Partition, o.offset)
			if r.o.allGroups || len(r.o.groups) > 1 {
				line = g + "," + line
			}
			csv = append(csv, line)
		}
	}
	switch {
	case r.o.export:
		for _, l := range csv {
			fmt.Fprintln(r.stdout, l)
		}
	case len(rows) > 1 || failed == 0:
		writeTable(r.stdout, rows)
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("resetting offsets failed for %d of %d streams groups", failed, len(groups))}
	}
	return nil
}

type newOffset struct {
	tp     clikit.TopicPartition
	offset int64
}

func (r *runner) resetOne(parent context.Context, g string) ([]newOffset, error) {
	d, err := r.describeGroup(parent, g, false)
	if err != nil {
		return nil, err
	}
	if d.State != "Empty" && d.State != "Dead" {
		return nil, clikit.Reportf(r.stderr, "Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", g, d.State)
	}
	tps, err := r.scopePartitions(parent, d)
	if err != nil {
		return nil, err
	}
	if len(tps) == 0 {
		return nil, nil
	}
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	topics := map[string]bool{}
	var names []string
	for _, tp := range tps {
		if !topics[tp.Topic] {
			topics[tp.Topic] = true
			names = append(names, tp.Topic)
		}
	}
	starts, err := r.cl.Adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	ends, err := r.cl.Adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	committed, err := r.cl.Adm.FetchOffsets(ctx, g)
	if err != nil {
		return nil, err
	}
	var byTime kadm.ListedOffsets
	if r.o.ToDatetime != "" || r.o.ByDuration != "" {
		var ms int64
		if r.o.ToDatetime != "" {
			ms, _ = clikit.ParseDateTime(r.o.ToDatetime, r.env.Loc)
		} else {
			dur, _ := clikit.ParseISODuration(r.o.ByDuration) // validated already
			var ok bool
			if ms, ok = dur.MillisBefore(r.env.Now()); !ok {
				return nil, fmt.Errorf("--by-duration %s reaches beyond the range of timestamps", r.o.ByDuration)
			}
		}
		if byTime, err = r.cl.Adm.ListOffsetsAfterMilli(ctx, ms, names...); err != nil {
			return nil, err
		}
	}
	var out []newOffset
	for _, tp := range tps {
		start, ok1 := starts.Lookup(tp.Topic, tp.Partition)
		end, ok2 := ends.Lookup(tp.Topic, tp.Partition)
		if !ok1 || !ok2 || start.Err != nil || end.Err != nil {
			return nil, fmt.Errorf("partition %s-%d does not exist", tp.Topic, tp.Partition)
		}
		cur, hasCur := committed.Lookup(tp.Topic, tp.Partition)
		hasCur = hasCur && cur.Err == nil && cur.At >= 0
		at := int64(-1)
		if o, ok := byTime.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil {
			at = o.Offset
		}
		target, ok := r.o.Target(start.Offset, end.Offset, cur.At, hasCur, at)
		if !ok {
			return nil, fmt.Errorf("cannot shift offset for partition %s-%d since there is no current committed offset", tp.Topic, tp.Partition)
		}
		out = append(out, newOffset{tp, target})
	}
	if r.o.execute {
		offs := kadm.Offsets{}
		for _, o := range out {
			offs.AddOffset(o.tp.Topic, o.tp.Partition, o.offset, -1)
		}
		resp, err := r.cl.Adm.CommitOffsets(ctx, g, offs)
		if err != nil {
			return nil, err
		}
		if err := resp.Error(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
