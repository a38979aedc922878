// Package lag monitors consumer lag: per group and partition the committed offset, the log end,
// the lag in records and in time (the age of the first unconsumed record), and a status from
// Burrow's evaluation rules over a sliding window of each partition's commits (OK, WARNING,
// STOP, STALL, REWIND; a group is OK, WARNING or ERROR). A Tracker records every commit as it
// happens; a Monitor samples the coordinator's committed offsets and the logs periodically,
// evaluates every group and publishes an immutable Snapshot of the groups' statuses and totals that
// the metrics, the HTTP API, the CLI and the console read; a group's partitions are evaluated
// against that snapshot when they are asked for (Monitor.GroupDetail).
package lag

import "fmt"

// Status is a partition's or a group's lag status, in Burrow's order of severity (a group's
// status is the worst of its partitions', with STOP, STALL and REWIND reported as ERROR).
type Status uint8

// The statuses. A partition is OK, WARNING, STOP, STALL or REWIND; a group OK, WARNING or ERROR.
const (
	StatusOK Status = iota + 1
	// StatusWarning: the consumer commits advancing offsets but its lag never decreases over
	// the window (it falls behind).
	StatusWarning
	// StatusError is a group's status when one of its partitions is STOP, STALL or REWIND.
	StatusError
	// StatusStop: the consumer stopped committing (the time since its last commit exceeds the
	// time the window spans) while lagging.
	StatusStop
	// StatusStall: the consumer keeps committing the same offset while lagging.
	StatusStall
	// StatusRewind: the consumer committed an offset lower than an earlier one in the window.
	StatusRewind
)

var statusNames = [...]string{"", "OK", "WARNING", "ERROR", "STOP", "STALL", "REWIND"}

func (s Status) String() string {
	if int(s) < len(statusNames) && s != 0 {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", s)
}

// MarshalText encodes the status by name (JSON).
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a status name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if i > 0 && n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown lag status %q", b)
}

// AllStatuses lists the statuses in order (metrics export one series per status).
var AllStatuses = []Status{StatusOK, StatusWarning, StatusError, StatusStop, StatusStall, StatusRewind}

// Observation is one commit of a partition as the window keeps it: the committed offset, the
// lag at that moment (log end − offset; -1 when the log end was unknown) and the commit time in
// Unix milliseconds.
type Observation struct {
	Offset int64 `json:"offset"`
	Lag    int64 `json:"lag"`
	At     int64 `json:"timestamp_ms"`
}

// Evaluate is Burrow's partition evaluation (its caching evaluator's calculatePartitionStatus):
// window holds the partition's commits, oldest first (at least one); ends are recent samples of
// the partition's log end offset; lag is the current lag; nowMs the evaluation time.
//
// A partition without lag is OK. Otherwise, in order: it is STOP when the time since its last
// commit exceeds the span of the window, unless a recent log end sample shows it had caught up;
// then, when its lag was never zero in the window: REWIND when an offset went backwards, STALL
// when the offset never moved, WARNING when the lag never decreased; else OK. The three trend
// rules need two commits: a window of one commit (a partition just seen, e.g. after a restart)
// is judged by the STOP rule only, where Burrow would call it STALL.
func Evaluate(window []Observation, ends []int64, lag, nowMs int64) Status {
	if len(window) == 0 || lag <= 0 {
		return StatusOK
	}
	first, last := window[0], window[len(window)-1]
	if nowMs-last.At > last.At-first.At && !recentlyCaughtUp(last.Offset, ends) {
		return StatusStop
	}
	if len(window) < 2 {
		return StatusOK
	}
	for _, o := range window {
		if o.Lag == 0 {
			return StatusOK
		}
	}
	for i := 1; i < len(window); i++ {
		if window[i].Offset < window[i-1].Offset {
			return StatusRewind
		}
	}
	moved := false
	for i := 1; i < len(window); i++ {
		if window[i].Offset != window[i-1].Offset {
			moved = true
			break
		}
	}
	if !moved {
		return StatusStall
	}
	var prev int64 = -1
	for _, o := range window {
		if o.Lag < 0 {
			continue
		}
		if prev >= 0 && o.Lag < prev {
			return StatusOK
		}
		prev = o.Lag
	}
	return StatusWarning
}

// recentlyCaughtUp reports whether a recent log end sample was at or below the last committed
// offset (Burrow's checkIfRecentLagZero): the consumer was up to date moments ago.
func recentlyCaughtUp(lastOffset int64, ends []int64) bool {
	for _, e := range ends {
		if e <= lastOffset {
			return true
		}
	}
	return false
}

// Fold adds a partition's status to a group's (start from StatusOK): the group takes the worst,
// with STOP, STALL and REWIND reported as ERROR (Burrow's group evaluation).
func Fold(group, partition Status) Status {
	if partition > StatusError {
		partition = StatusError
	}
	return max(group, partition)
}
