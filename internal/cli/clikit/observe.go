package clikit

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The JSON of muster's /api/v1 history and lag endpoints, as the tools read it.

// HistoryJSON is GET /api/v1/groups/{g}/history.
type HistoryJSON struct {
	Group  string `json:"group"`
	Paging struct {
		Total int `json:"total"`
	} `json:"paging"`
	Events []HistoryEventJSON `json:"events"`
}

// HistoryEventJSON is one group epoch bump.
type HistoryEventJSON struct {
	Seq       int64       `json:"seq"`
	Time      string      `json:"time"`
	GroupType string      `json:"group_type"`
	OldEpoch  int32       `json:"old_epoch"`
	NewEpoch  int32       `json:"new_epoch"`
	Causes    []CauseJSON `json:"causes"`
	Members   []string    `json:"members"`
}

// CauseJSON is one cause of a bump.
type CauseJSON struct {
	Cause  string `json:"cause"`
	Member string `json:"member,omitempty"`
	Reason string `json:"reason,omitempty"`
	Topic  string `json:"topic,omitempty"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
}

// Details renders the cause without its kind: "member=m reason=session timeout".
func (c CauseJSON) Details() string {
	var parts []string
	for _, kv := range [][2]string{{"member", c.Member}, {"topic", c.Topic}, {"reason", c.Reason}, {"old", c.Old}, {"new", c.New}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}

// FetchHistory reads a group's whole history, page by page (newest first, as the API gives it).
func FetchHistory(ctx context.Context, a *HTTPAPI, group string) (*HistoryJSON, error) {
	var all *HistoryJSON
	for page := 1; ; page++ {
		var h HistoryJSON
		if err := a.Get(ctx, fmt.Sprintf("/groups/%s/history?size=1000&page=%d", PathEscape(group), page), &h); err != nil {
			return nil, err
		}
		if all == nil {
			all = &h
		} else {
			all.Events = append(all.Events, h.Events...)
		}
		if len(h.Events) == 0 || len(all.Events) >= h.Paging.Total {
			return all, nil
		}
	}
}

// PrintHistory prints a group's events oldest first: GROUP, TIME (UTC), EPOCH, CAUSE, DETAILS
// (one line per cause; the first is the main one).
func PrintHistory(w io.Writer, h *HistoryJSON) {
	widths := []int{20, 24, 10, 26, 0}
	WriteRow(w, widths, "GROUP", "TIME", "EPOCH", "CAUSE", "DETAILS")
	for i := len(h.Events) - 1; i >= 0; i-- {
		e := h.Events[i]
		t := e.Time
		if ts, err := time.Parse(time.RFC3339Nano, e.Time); err == nil {
			t = ts.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		epoch := fmt.Sprintf("%d→%d", e.OldEpoch, e.NewEpoch)
		for j, c := range e.Causes {
			if j == 0 {
				WriteRow(w, widths, h.Group, t, epoch, c.Cause, c.Details())
			} else {
				WriteRow(w, widths, "", "", "", "+ "+c.Cause, c.Details())
			}
		}
	}
}

// LagJSON is GET /api/v1/groups/{g}/lag.
type LagJSON struct {
	Group           string  `json:"group"`
	EvaluatedAt     string  `json:"evaluated_at"`
	Status          string  `json:"status"`
	TotalLag        int64   `json:"total_lag"`
	MaxLag          int64   `json:"max_lag"`
	MaxLagTopic     string  `json:"max_lag_topic"`
	MaxLagPartition int32   `json:"max_lag_partition"`
	MaxTimeLagMs    int64   `json:"max_time_lag_ms"`
	Complete        float64 `json:"complete"`
	Paging          struct {
		Total int `json:"total"`
	} `json:"paging"`
	Partitions []LagPartitionJSON `json:"partitions"`
}

// LagPartitionJSON is one partition's evaluation.
type LagPartitionJSON struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	LogEndOffset    int64  `json:"log_end_offset"`
	Lag             int64  `json:"lag"`
	TimeLagMs       int64  `json:"time_lag_ms"`
	Status          string `json:"status"`
	Commits         int    `json:"commits"`
}

// FetchLag reads a group's lag status with every partition, page by page.
func FetchLag(ctx context.Context, a *HTTPAPI, group string) (*LagJSON, error) {
	var all *LagJSON
	for page := 1; ; page++ {
		var l LagJSON
		if err := a.Get(ctx, fmt.Sprintf("/groups/%s/lag?size=1000&page=%d", PathEscape(group), page), &l); err != nil {
			return nil, err
		}
		if all == nil {
			all = &l
		} else {
			all.Partitions = append(all.Partitions, l.Partitions...)
		}
		if len(l.Partitions) == 0 || len(all.Partitions) >= l.Paging.Total {
			return all, nil
		}
	}
}

// PrintLag prints a group's lag status: the group line (Burrow's group status, total and
// largest lag, largest time lag) and one line per partition.
func PrintLag(w io.Writer, l *LagJSON) {
	gw := []int{20, 9, 12, 30, 14, 0}
	maxAt := "-"
	if l.MaxLagTopic != "" {
		maxAt = fmt.Sprintf("%d (%s-%d)", l.MaxLag, l.MaxLagTopic, l.MaxLagPartition)
	}
	WriteRow(w, gw, "GROUP", "STATUS", "TOTAL-LAG", "MAX-LAG", "MAX-TIME-LAG", "EVALUATED")
	WriteRow(w, gw, l.Group, l.Status, strconv.FormatInt(l.TotalLag, 10), maxAt, FormatMs(l.MaxTimeLagMs), l.EvaluatedAt)
	fmt.Fprintln(w)
	pw := []int{20, 10, 15, 15, 10, 14, 8, 0}
	WriteRow(w, pw, "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "TIME-LAG", "STATUS", "COMMITS")
	for _, p := range l.Partitions {
		end, lag := "-", "-"
		if p.LogEndOffset >= 0 {
			end = strconv.FormatInt(p.LogEndOffset, 10)
		}
		if p.Lag >= 0 {
			lag = strconv.FormatInt(p.Lag, 10)
		}
		WriteRow(w, pw, p.Topic, strconv.Itoa(int(p.Partition)), strconv.FormatInt(p.CommittedOffset, 10), end, lag,
			FormatMs(p.TimeLagMs), p.Status, strconv.Itoa(p.Commits))
	}
}

// FormatMs renders a duration in milliseconds ("-" when unknown).
func FormatMs(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// PathEscape escapes a group id for a URL path segment.
func PathEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
