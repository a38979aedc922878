package console

import (
	"context"
)

// Operator performs the console's operator actions. It is the one seam where authorization
// will check who may act; every action arrives here from a POST, never from a GET.
type Operator interface {
	// ResetOffsets resets a group's committed offsets (as `muster consumer-groups
	// --reset-offsets` / `muster streams-groups --reset-offsets` do); DryRun only plans.
	ResetOffsets(ctx context.Context, r ResetRequest) (*ActionResult, error)
	// DeleteOffsets deletes a group's committed offsets of some topics (OffsetDelete).
	DeleteOffsets(ctx context.Context, r DeleteOffsetsRequest) (*ActionResult, error)
	// DeleteGroup deletes a group (DeleteGroups).
	DeleteGroup(ctx context.Context, r GroupRequest) (*ActionResult, error)
	// RemoveMember removes a member from its group (LeaveGroup, as an admin).
	RemoveMember(ctx context.Context, r MemberRequest) (*ActionResult, error)
}

// ResetRequest is an offset reset: one scenario of the CLI's (to-earliest, to-latest,
// to-current, to-offset, shift-by, to-datetime, by-duration) with its value, for the given
// topics (topic or topic:0,1,2) or all the group's topics.
type ResetRequest struct {
	Group     string   `json:"-"`
	GroupType string   `json:"-"`
	Scenario  string   `json:"scenario"`
	Value     string   `json:"value,omitempty"`
	Topics    []string `json:"topics,omitempty"`
	AllTopics bool     `json:"all_topics,omitempty"`
	// Execute commits the plan; without it the request is a dry run.
	Execute bool `json:"execute,omitempty"`
}

// DeleteOffsetsRequest deletes the committed offsets of topics (topic or topic:0,1,2).
type DeleteOffsetsRequest struct {
	Group     string   `json:"-"`
	GroupType string   `json:"-"`
	Topics    []string `json:"topics"`
	Execute   bool     `json:"execute,omitempty"`
}

// GroupRequest names a group to delete.
type GroupRequest struct {
	Group     string `json:"-"`
	GroupType string `json:"-"`
	Execute   bool   `json:"execute,omitempty"`
}

// MemberRequest names a member to remove.
type MemberRequest struct {
	Group      string `json:"-"`
	GroupType  string `json:"-"`
	MemberID   string `json:"-"`
	InstanceID string `json:"-"`
	Reason     string `json:"reason,omitempty"`
	Execute    bool   `json:"execute,omitempty"`
}

// ActionResult is what an action did or, for a dry run, would do.
type ActionResult struct {
	DryRun bool `json:"dry_run"`
	// Command is the equivalent command line (what an operator would type).
	Command string `json:"command"`
	// Offsets are the planned or committed offsets (reset), or those to delete.
	Offsets []PlannedOffset `json:"offsets,omitempty"`
	// Message is a summary line.
	Message string `json:"message"`
}

// PlannedOffset is one partition of a reset or delete.
type PlannedOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Current is the committed offset before (-1 none), New the offset after (-1: deleted).
	Current int64 `json:"current_offset"`
	New     int64 `json:"new_offset"`
}

// ActionError is an action the broker refused (e.g. a reset of an active group): HTTP 409 with
// the tool's message.
type ActionError struct{ Msg string }

func (e *ActionError) Error() string { return e.Msg }
