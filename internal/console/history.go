package console

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/muster-io/muster/internal/coordinator"
)

// History is one page of a group's rebalance history, newest first.
type History struct {
	Group  string         `json:"group"`
	Page   Page           `json:"paging"`
	Events []HistoryEvent `json:"events"`
}

// HistoryEvent is one group epoch bump with its causes.
type HistoryEvent struct {
	coordinator.RebalanceEvent
	Time    string   `json:"time"`
	Members []string `json:"members"`
}

// history reads a page of a group's rebalance history (newest first). A group that does not
// exist and has no history is not found.
func (c *Console) history(ctx context.Context, id string, page, size int) (*History, error) {
	events, err := c.d.Coordinator.RebalanceHistory(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		if _, err := c.groupType(ctx, id); err != nil {
			return nil, err
		}
	}
	h := &History{Group: id, Page: newPage(page, size, len(events)), Events: []HistoryEvent{}}
	lo, hi := h.Page.bounds()
	for i := len(events) - 1 - lo; i >= len(events)-hi; i-- {
		e := events[i]
		members := e.Members()
		if members == nil {
			members = []string{}
		}
		h.Events = append(h.Events, HistoryEvent{RebalanceEvent: e, Time: time.UnixMilli(e.TimeMs).UTC().Format(time.RFC3339Nano), Members: members})
	}
	return h, nil
}

func (c *Console) apiHistory(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathGroup(r)
	if err != nil {
		return nil, err
	}
	q, err := parseQuery(r.URL.RawQuery, "page", "size")
	if err != nil {
		return nil, err
	}
	page, size, err := q.paging("")
	if err != nil {
		return nil, err
	}
	return c.history(r.Context(), id, page, size)
}

// historyPageSize is how many events the group page's timeline shows per page.
const historyPageSize = 20

// fillHistory puts a page of the rebalance timeline on the group page.
func (c *Console) fillHistory(ctx context.Context, gp *groupPage, page int) {
	h, err := c.history(ctx, gp.G.Group, page, historyPageSize)
	if err != nil {
		gp.HistoryNote = "The rebalance history could not be read: " + err.Error()
		return
	}
	gp.HistoryPage = h.Page
	if len(h.Events) == 0 {
		gp.HistoryNote = "No rebalance is recorded for this group (muster.rebalance.history.max.events = 0 turns the history off)."
		return
	}
	for _, e := range h.Events {
		row := historyRow{Time: time.UnixMilli(e.TimeMs).UTC().Format("2006-01-02 15:04:05.000"), Cause: string(e.Causes[0].Kind),
			OldEpoch: e.OldEpoch, NewEpoch: e.NewEpoch, Members: e.Members}
		var parts []string
		for i, cs := range e.Causes {
			s := cs.String()
			if i == 0 {
				s = strings.TrimPrefix(strings.TrimPrefix(s, string(cs.Kind)), " ")
			}
			if s != "" {
				parts = append(parts, s)
			}
		}
		row.Summary = strings.Join(parts, "; ")
		gp.History = append(gp.History, row)
	}
}

// historyVersion fingerprints a group's history for live updates.
func (c *Console) historyVersion(ctx context.Context, id string) string {
	events, err := c.d.Coordinator.RebalanceHistory(ctx, id)
	if err != nil || len(events) == 0 {
		return "none"
	}
	return fmt.Sprint(events[len(events)-1].Seq)
}
