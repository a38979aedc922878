package consumergroups

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// deleteOffsetsRow is one line of the TOPIC PARTITION STATUS table; Partition
// nil is "Not Provided" (a --topic without partitions).
type deleteOffsetsRow struct {
	Topic     string  `json:"topic"`
	Partition *int32  `json:"partition"`
	Status    string  `json:"status"`
	Error     *string `json:"error"`
}

// deleteOffsetsCmd implements --delete-offsets --group g --topic t[:p,p]...
// with OffsetDelete (KIP-496). Output per seed 004: a group-level error
// prints only "Error: Deletion of offsets failed due to: <message>"; otherwise
// the table
//
//	TOPIC                          PARTITION       STATUS
//	foo                            Not Provided    Error: <message>
//	test                           0               Successful
//
// where a --topic without partitions is one "Not Provided" row covering all
// of its partitions (Successful only if every partition was deleted, else
// the first partition error). Any error exits 1.
func (r *runner) deleteOffsetsCmd(parent context.Context) error {
	group := r.o.groups[0]
	args, _ := clikit.ParseTopicArgs(r.o.topics) // validated already

	// Expand whole topics to their partitions via metadata.
	var whole []string
	for _, a := range args {
		if a.Whole() {
			whole = appendUnique(whole, a.Topic)
		}
	}
	topicErr := map[string]error{}
	wholeParts := map[string][]int32{}
	if len(whole) > 0 {
		ctx, cancel := r.cl.Ctx(parent)
		tds, err := r.cl.Adm.ListTopics(ctx, whole...)
		cancel()
		if err != nil {
			return err
		}
		for _, t := range whole {
			td, ok := tds[t]
			switch {
			case !ok:
				topicErr[t] = kerr.UnknownTopicOrPartition
			case td.Err != nil:
				topicErr[t] = td.Err
			default:
				wholeParts[t] = td.Partitions.Numbers()
			}
		}
	}
	req := make(kadm.TopicsSet)
	for _, a := range args {
		if !a.Whole() {
			if len(a.Partitions) > 0 { // "t:," lists no partition, as in Kafka
				req.Add(a.Topic, a.Partitions...)
			}
		} else if topicErr[a.Topic] == nil {
			req.Add(a.Topic, wholeParts[a.Topic]...)
		}
	}

	var groupErr error
	var resps kadm.DeleteOffsetsResponses
	if len(req) > 0 {
		ctx, cancel := r.cl.Ctx(parent)
		var err error
		resps, err = r.cl.Adm.DeleteOffsets(ctx, group, req)
		cancel()
		groupErr = err
	}
	if groupErr != nil {
		msg := "Deletion of offsets failed due to: " + clikit.ErrMessage(groupErr)
		if r.json() {
			if err := writeJSON(r.stdout, deleteOffsetsJSON{Group: group, Error: ptr(clikit.ErrMessage(groupErr)), Partitions: []deleteOffsetsRow{}}); err != nil {
				return err
			}
		}
		clikit.PrintError(r.stderr, "%s", msg)
		return &reportedError{Msg: msg}
	}

	partErr := func(t string, p int32) error {
		ps, ok := resps[t]
		if !ok {
			return errors.New("no result for this partition")
		}
		err, ok := ps[p]
		if !ok {
			return errors.New("no result for this partition")
		}
		return err
	}
	seen := map[string]bool{}
	var rows []deleteOffsetsRow
	add := func(t string, p *int32, err error) {
		key := t + ":" + optPartition(p)
		if seen[key] {
			return
		}
		seen[key] = true
		rw := deleteOffsetsRow{Topic: t, Partition: p, Status: "Successful"}
		if err != nil {
			rw.Status = "Error: " + clikit.ErrMessage(err)
			rw.Error = ptr(clikit.ErrMessage(err))
		}
		rows = append(rows, rw)
	}
	for _, a := range args {
		if a.Whole() {
			err := topicErr[a.Topic]
			if err == nil {
				ps := append([]int32(nil), wholeParts[a.Topic]...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				for _, p := range ps {
					if err = partErr(a.Topic, p); err != nil {
						break
					}
				}
			}
			add(a.Topic, nil, err)
			continue
		}
		for _, p := range a.Partitions {
			add(a.Topic, ptr(p), partErr(a.Topic, p))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		pi, pj := int64(-1), int64(-1)
		if rows[i].Partition != nil {
			pi = int64(*rows[i].Partition)
		}
		if rows[j].Partition != nil {
			pj = int64(*rows[j].Partition)
		}
		return pi < pj
	})
	failed := 0
	for _, rw := range rows {
		if rw.Error != nil {
			failed++
		}
	}
	if r.json() {
		if err := writeJSON(r.stdout, deleteOffsetsJSON{Group: group, Partitions: rows}); err != nil {
			return err
		}
	} else {
		widths := []int{30, 15, 15}
		writeRow(r.stdout, widths, "TOPIC", "PARTITION", "STATUS")
		for _, rw := range rows {
			p := "Not Provided"
			if rw.Partition != nil {
				p = strconv.Itoa(int(*rw.Partition))
			}
			writeRow(r.stdout, widths, rw.Topic, p, rw.Status)
		}
	}
	if failed > 0 {
		msg := fmt.Sprintf("Deletion of offsets failed for %d of %d topic partitions.", failed, len(rows))
		clikit.PrintError(r.stderr, "%s", msg)
		return &reportedError{Msg: msg}
	}
	return nil
}

// deleteOffsetsJSON is the --delete-offsets --output json document.
type deleteOffsetsJSON struct {
	Group      string             `json:"group"`
	Error      *string            `json:"error"`
	Partitions []deleteOffsetsRow `json:"partitions"`
}

func optPartition(p *int32) string {
	if p == nil {
		return "*"
	}
	return strconv.Itoa(int(*p))
}
