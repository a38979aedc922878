package sharegroups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

type newOffset struct {
	tp     clikit.TopicPartition
	offset int64
}

type resetJSON struct {
	Group     string  `json:"group"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	NewOffset int64   `json:"new_offset"`
	Error     *string `json:"error,omitempty"`
}

// resetCmd implements --reset-offsets for each group: the group must be empty; the new start
// offsets are printed as "GROUP TOPIC PARTITION NEW-OFFSET" and, with --execute, applied with
// AlterShareGroupOffsets. Every new offset is clamped to [log start, log end].
func (r *runner) resetCmd(ctx context.Context) error {
	groups, err := r.groupIDs(ctx)
	if err != nil {
		return err
	}
	sort.Strings(groups)
	rows := [][]string{{"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"}}
	var csv []string
	docs := []resetJSON{}
	failed := 0
	for _, g := range groups {
		offs, err := r.resetOne(ctx, g)
		if err != nil {
			var re *reportedError
			if !errors.As(err, &re) {
				fmt.Fprintf(r.stderr, "Error: Resetting offsets of share group '%s' failed due to %s\n", g, clikit.ErrMessage(err))
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
			docs = append(docs, resetJSON{Group: g, Topic: o.tp.Topic, Partition: o.tp.Partition, NewOffset: o.offset})
		}
	}
	switch {
	case r.json():
		if err := r.writeJSON(docs); err != nil {
			return err
		}
	case r.o.export:
		for _, l := range csv {
			fmt.Fprintln(r.stdout, l)
		}
	case len(rows) > 1 || failed == 0:
		writeTable(r.stdout, rows)
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("resetting offsets failed for %d of %d share groups", failed, len(groups))}
	}
	return nil
}

func (r *runner) resetOne(parent context.Context, g string) ([]newOffset, error) {
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	described, err := r.cl.Adm.DescribeShareGroups(ctx, g)
	if err != nil && described == nil {
		return nil, err
	}
	d := described[g]
	switch {
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		// A group that does not exist yet: its start offsets can be set before it starts.
	case d.Err != nil:
		return nil, d.Err
	case d.GroupState != "Empty" && d.GroupState != "Dead":
		return nil, clikit.Reportf(r.stderr, "Share group '%s' is not empty: its offsets can only be reset when it has no members, but the current state is %s.", g, d.GroupState)
	}
	current := kadm.ShareOffsets{}
	if d.Err == nil {
		offs, err := r.cl.Adm.DescribeShareGroupOffsets(ctx, g)
		if err != nil {
			return nil, err
		}
		current = offs[g].Offsets
	}
	tps, err := r.scopePartitions(ctx, current)
	if err != nil {
		return nil, err
	}
	if len(tps) == 0 {
		return nil, nil
	}
	var names []string
	for _, tp := range tps {
		if !slices.Contains(names, tp.Topic) {
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
	var byTime kadm.ListedOffsets
	if ms, ok, err := r.o.TimeMillis(r.env.Loc, r.env.Now()); err != nil {
		return nil, err
	} else if ok {
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
		cur, hasCur := current[tp.Topic][tp.Partition]
		hasCur = hasCur && cur.Err == nil && cur.StartOffset >= 0
		at := int64(-1)
		if o, ok := byTime.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil {
			at = o.Offset
		}
		target, ok := r.o.Target(start.Offset, end.Offset, cur.StartOffset, hasCur, at)
		if !ok {
			return nil, fmt.Errorf("cannot shift the start offset of partition %s-%d since the share group has none", tp.Topic, tp.Partition)
		}
		out = append(out, newOffset{tp, target})
	}
	if r.o.execute {
		offs := kadm.Offsets{}
		for _, o := range out {
			offs.AddOffset(o.tp.Topic, o.tp.Partition, o.offset, -1)
		}
		resp, err := r.cl.Adm.AlterShareGroupOffsets(ctx, g, offs)
		if err != nil {
			return nil, err
		}
		for t, ps := range resp {
			for p, e := range ps {
				if e != nil {
					return nil, fmt.Errorf("partition %s-%d: %w", t, p, e)
				}
			}
		}
	}
	return out, nil
}

// scopePartitions resolves --topic / --all-topics: --all-topics means every share-partition the
// group has; a --topic without partitions means all its partitions.
func (r *runner) scopePartitions(ctx context.Context, current kadm.ShareOffsets) ([]clikit.TopicPartition, error) {
	var out []clikit.TopicPartition
	if r.o.allTopics {
		for _, o := range current.Sorted() {
			if o.Err == nil {
				out = append(out, clikit.TopicPartition{Topic: o.Topic, Partition: o.Partition})
			}
		}
		return out, nil
	}
	return clikit.PartitionsOfTopicArgs(ctx, r.cl.Adm, r.o.topics)
}
