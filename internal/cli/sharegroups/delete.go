package sharegroups

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// deleteCmd implements --delete with DeleteGroups. Only share groups are deleted (a group of
// another type is reported), and the broker refuses groups with members (NON_EMPTY_GROUP).
func (r *runner) deleteCmd(parent context.Context) error {
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
	var deleted, toDelete []string
	var failed []clikit.GroupFailure
	for _, g := range groups {
		d, ok := described[g]
		switch {
		case !ok || errors.Is(d.Err, kerr.GroupIDNotFound) || d.Err == nil && d.GroupState == "Dead":
			failed = append(failed, clikit.GroupFailure{Group: g, Error: fmt.Sprintf("GROUP_ID_NOT_FOUND: Group '%s' is not a share group or does not exist.", g)})
		case d.Err != nil:
			failed = append(failed, clikit.GroupFailure{Group: g, Error: clikit.ErrMessage(d.Err)})
		default:
			toDelete = append(toDelete, g)
		}
	}
	if len(toDelete) > 0 {
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
	if r.json() {
		if err := r.writeJSON(struct {
			Deleted []string              `json:"deleted"`
			Failed  []clikit.GroupFailure `json:"failed"`
		}{append([]string{}, deleted...), append([]clikit.GroupFailure{}, failed...)}); err != nil {
			return err
		}
	}
	return clikit.ReportDeleteGroups(r.stdout, r.stderr, "share", deleted, failed, r.json())
}

type deleteOffsetsJSON struct {
	Group  string              `json:"group"`
	Topics []deleteOffsetTopic `json:"topics"`
}

type deleteOffsetTopic struct {
	Topic  string  `json:"topic"`
	Status string  `json:"status"`
	Error  *string `json:"error"`
}

// deleteOffsetsCmd implements --delete-offsets --group g --topic t... with
// DeleteShareGroupOffsets: the share state of each whole topic is deleted (the group must be
// empty).
func (r *runner) deleteOffsetsCmd(parent context.Context) error {
	g := r.o.groups[0]
	ctx, cancel := r.cl.Ctx(parent)
	defer cancel()
	var topics []string
	seen := map[string]bool{}
	for _, t := range r.o.topics {
		if !seen[t] {
			seen[t] = true
			topics = append(topics, t)
		}
	}
	resps, err := r.cl.Adm.DeleteShareGroupOffsets(ctx, g, topics...)
	if err != nil {
		return err
	}
	doc := deleteOffsetsJSON{Group: g}
	rows := [][]string{{"TOPIC", "STATUS"}}
	failed := 0
	for _, t := range topics {
		status := "Successful"
		var msg *string
		if e, _ := resps.Lookup(t); e != nil {
			m := clikit.ErrMessage(e)
			status, msg = "Error: "+m, &m
			failed++
		}
		rows = append(rows, []string{t, status})
		doc.Topics = append(doc.Topics, deleteOffsetTopic{Topic: t, Status: status, Error: msg})
	}
	if r.json() {
		if err := r.writeJSON(doc); err != nil {
			return err
		}
	} else {
		if failed > 0 {
			fmt.Fprintln(r.stderr, "Error: Encounter some partition level error, see the follow-up details:")
		} else {
			fmt.Fprintf(r.stdout, "Request succeeded for deleting offsets from group %s.\n", g)
		}
		writeTable(r.stdout, rows)
	}
	if failed > 0 {
		return &reportedError{Msg: fmt.Sprintf("deleting offsets of %d topics failed", failed)}
	}
	return nil
}
