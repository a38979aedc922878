package consumergroups

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
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
	type failure struct {
		Group string `json:"group"`
		Error string `json:"error"`
	}
	deleted, failed := []string{}, []failure{}
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
				failed = append(failed, failure{g, errMessage(e)})
			case res.Err != nil:
				failed = append(failed, failure{g, deleteErrText(res.Err, res.ErrMessage)})
			default:
				deleted = append(deleted, g)
			}
		}
	}
	if r.json() {
		if err := writeJSON(r.stdout, struct {
			Deleted []string  `json:"deleted"`
			Failed  []failure `json:"failed"`
		}{deleted, failed}); err != nil {
			return err
		}
	}
	if len(failed) == 0 {
		if !r.json() {
			fmt.Fprintf(r.stdout, "Deletion of requested consumer groups ('%s') was successful.\n", strings.Join(deleted, ", "))
		}
		return nil
	}
	r.printErrf("Deletion of some consumer groups failed:")
	for _, f := range failed {
		fmt.Fprintf(r.stderr, "* Group '%s' could not be deleted due to: %s\n", f.Group, f.Error)
	}
	if len(deleted) > 0 && !r.json() {
		fmt.Fprintf(r.stdout, "These consumer groups were deleted successfully: '%s'\n", strings.Join(deleted, "', '"))
	}
	return &reportedError{Msg: fmt.Sprintf("deletion of %d consumer groups failed", len(failed))}
}

// deleteErrText renders a per-group delete error like Kafka's exception text:
// "<ExceptionLike>: message" becomes "ERROR_NAME: description" (kerr form),
// preferring a broker-supplied message when present.
func deleteErrText(err error, brokerMsg string) string {
	if ke, ok := err.(*kerr.Error); ok {
		msg := errMessage(ke)
		if brokerMsg != "" {
			msg = brokerMsg
		}
		return ke.Message + ": " + msg
	}
	return err.Error()
}
