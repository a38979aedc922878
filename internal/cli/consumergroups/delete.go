package consumergroups

import (
	"context"
	"fmt"
	"sort"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// deleteGroupsCmd implements --delete (--group ... | --all-groups) with
// DeleteGroups. Kafka's messages: on success "Deletion of requested consumer
// groups ('g1, g2') was successful."; otherwise "Error: Deletion of some
// consumer groups failed:" and one "* Group 'g' could not be deleted due to:
// <error>" line per failure (stderr), then the groups that were deleted.
func (r *runner) deleteGroupsCmd(parent context.Context) error {
	groups, err := r.groupIDs(parent)
	if err != nil {
		return err
	}
	sort.Strings(groups)
	deleted, failed := []string{}, []clikit.GroupFailure{}
	if len(groups) > 0 {
		ctx, cancel := r.cl.Ctx(parent)
		defer cancel()
		resps, err := r.cl.Adm.DeleteGroups(ctx, groups...)
		if err != nil && resps == nil {
			return err
		}
		for _, g := range groups {
			res, ok := resps[g]
			switch {
			case !ok:
				e := err
				if e == nil {
					e = fmt.Errorf("no result for group '%s'", g)
				}
				failed = append(failed, clikit.GroupFailure{Group: g, Error: clikit.ErrMessage(e)})
			case res.Err != nil:
				failed = append(failed, clikit.GroupFailure{Group: g, Error: clikit.DeleteErrText(res.Err, res.ErrMessage)})
			default:
				deleted = append(deleted, g)
			}
		}
	}
	if r.json() {
		if err := writeJSON(r.stdout, struct {
			Deleted []string              `json:"deleted"`
			Failed  []clikit.GroupFailure `json:"failed"`
		}{deleted, failed}); err != nil {
			return err
		}
	}
	return clikit.ReportDeleteGroups(r.stdout, r.stderr, "consumer", deleted, failed, r.json())
}
