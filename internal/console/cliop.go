package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CLIOperator acts as an operator at a terminal would: it runs muster's own consumer-groups
// and streams-groups commands (the same code, in process) against the broker's Kafka listener,
// so every action takes the Kafka-semantic path the CLI takes (DescribeGroups, ListOffsets,
// OffsetCommit, OffsetDelete, DeleteGroups), and LeaveGroup for removing a member (Kafka's
// Admin.removeMembersFromConsumerGroup; the CLI has no such action).
type CLIOperator struct {
	// Bootstrap is the broker's own Kafka listener.
	Bootstrap string
	Tools     Tools
	// Timeout bounds one action (default 30 s).
	Timeout time.Duration
}

func (o *CLIOperator) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 30 * time.Second
	}
	return o.Timeout
}

// run executes one CLI command with args and returns its stdout, or an *ActionError with what
// it printed on stderr.
func (o *CLIOperator) run(ctx context.Context, cmd *cobra.Command, args []string) (string, error) {
	if o.Bootstrap == "" {
		return "", errNoListener
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	var out, errb bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(ctx); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		msg = strings.TrimPrefix(msg, "Error: ")
		if i := strings.Index(msg, "\nRun '"); i >= 0 {
			// A usage error of the tool: the request's values are malformed.
			return "", badf(msg[:i])
		}
		return out.String(), &ActionError{Msg: msg}
	}
	return out.String(), nil
}

// Tools build muster's admin commands (cmd/muster hands over consumergroups.NewCommand and
// streamsgroups.NewCommand; the console does not import the CLI, whose tests start brokers).
type Tools struct {
	ConsumerGroups, StreamsGroups func() *cobra.Command
}

// errShare: share groups have their own tool; the console does not act on them yet.
var errShare = &ActionError{Msg: "the console does not act on share groups yet: use muster share-groups (--reset-offsets, --delete-offsets, --delete)"}

// command builds a fresh command of tool.
func (o *CLIOperator) command(tool string) (*cobra.Command, error) {
	f := o.Tools.ConsumerGroups
	if tool == "streams-groups" {
		f = o.Tools.StreamsGroups
	}
	if f == nil {
		return nil, &ActionError{Msg: "operator actions are not available: this broker was started without muster's admin tools"}
	}
	return f(), nil
}

// errNoListener: the broker has no PLAINTEXT listener for the console to act through.
var errNoListener = &ActionError{Msg: "the console acts through a PLAINTEXT listener and the broker has none (every listener needs TLS or SASL)"}

// commandLine is args as an operator would type them.
func commandLine(tool string, args []string) string {
	var b strings.Builder
	b.WriteString("muster ")
	b.WriteString(tool)
	for _, a := range args {
		b.WriteByte(' ')
		if a == "" || strings.ContainsAny(a, " \t'\"$\\`!*?") {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}

func (o *CLIOperator) base(group string) []string {
	return []string{"--bootstrap-server", o.Bootstrap, "--group", group}
}

func scenarioArgs(r ResetRequest) []string {
	args := []string{"--" + r.Scenario}
	if r.Value != "" {
		args = append(args, r.Value)
	}
	return args
}

// ResetOffsets implements Operator.
func (o *CLIOperator) ResetOffsets(ctx context.Context, r ResetRequest) (*ActionResult, error) {
	if r.GroupType == "share" {
		return nil, errShare
	}
	mode := "--dry-run"
	if r.Execute {
		mode = "--execute"
	}
	if r.GroupType == "streams" {
		args := append(o.base(r.Group), "--reset-offsets")
		args = append(args, scenarioArgs(r)...)
		if r.AllTopics {
			args = append(args, "--all-input-topics")
		}
		for _, t := range r.Topics {
			args = append(args, "--input-topic", t)
		}
		args = append(args, mode, "--export")
		res := &ActionResult{DryRun: !r.Execute, Command: commandLine("streams-groups", args)}
		cmd, err := o.command("streams-groups")
		if err != nil {
			return nil, err
		}
		out, err := o.run(ctx, cmd, args)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Split(line, ",")
			if len(f) != 3 {
				continue
			}
			p, err1 := strconv.ParseInt(f[1], 10, 32)
			n, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 == nil && err2 == nil {
				res.Offsets = append(res.Offsets, PlannedOffset{Topic: f[0], Partition: int32(p), Current: -1, New: n})
			}
		}
		res.Message = resetMessage(res)
		return res, nil
	}
	args := append(o.base(r.Group), "--reset-offsets")
	args = append(args, scenarioArgs(r)...)
	if r.AllTopics {
		args = append(args, "--all-topics")
	}
	for _, t := range r.Topics {
		args = append(args, "--topic", t)
	}
	args = append(args, mode, "--output", "json")
	res := &ActionResult{DryRun: !r.Execute, Command: commandLine("consumer-groups", args)}
	cmd, err := o.command("consumer-groups")
	if err != nil {
		return nil, err
	}
	out, err := o.run(ctx, cmd, args)
	if err != nil {
		return nil, err
	}
	var parsed struct {
		Groups []struct {
			Offsets []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				NewOffset int64  `json:"new_offset"`
			} `json:"offsets"`
			Error *string `json:"error"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &parsed); err != nil {
		return nil, fmt.Errorf("reading the reset plan: %w", err)
	}
	for _, g := range parsed.Groups {
		if g.Error != nil {
			return nil, &ActionError{Msg: *g.Error}
		}
		for _, off := range g.Offsets {
			res.Offsets = append(res.Offsets, PlannedOffset{Topic: off.Topic, Partition: off.Partition, Current: -1, New: off.NewOffset})
		}
	}
	res.Message = resetMessage(res)
	return res, nil
}

func resetMessage(r *ActionResult) string {
	if r.DryRun {
		return fmt.Sprintf("Dry run: %d partitions would be reset; nothing was changed.", len(r.Offsets))
	}
	return fmt.Sprintf("Reset %d partitions.", len(r.Offsets))
}

// DeleteOffsets implements Operator.
func (o *CLIOperator) DeleteOffsets(ctx context.Context, r DeleteOffsetsRequest) (*ActionResult, error) {
	if r.GroupType == "share" {
		return nil, errShare
	}
	args := append(o.base(r.Group), "--delete-offsets")
	tool, topicFlag := "consumer-groups", "--topic"
	if r.GroupType == "streams" {
		tool, topicFlag = "streams-groups", "--input-topic"
	}
	for _, t := range r.Topics {
		args = append(args, topicFlag, t)
	}
	if tool == "consumer-groups" {
		args = append(args, "--output", "json")
	}
	res := &ActionResult{DryRun: !r.Execute, Command: commandLine(tool, args)}
	if !r.Execute {
		res.Message = "Dry run: the committed offsets listed would be deleted; nothing was changed."
		return res, nil
	}
	cmd, err := o.command(tool)
	if err != nil {
		return nil, err
	}
	if _, err := o.run(ctx, cmd, args); err != nil {
		return nil, err
	}
	res.Message = "Deleted the committed offsets."
	return res, nil
}

// DeleteGroup implements Operator.
func (o *CLIOperator) DeleteGroup(ctx context.Context, r GroupRequest) (*ActionResult, error) {
	if r.GroupType == "share" {
		return nil, errShare
	}
	args := append(o.base(r.Group), "--delete")
	tool := "consumer-groups"
	if r.GroupType == "streams" {
		tool = "streams-groups"
	}
	res := &ActionResult{DryRun: !r.Execute, Command: commandLine(tool, args)}
	if !r.Execute {
		res.Message = fmt.Sprintf("Dry run: group %s and its committed offsets would be deleted (it must be empty); nothing was changed.", r.Group)
		return res, nil
	}
	cmd, err := o.command(tool)
	if err != nil {
		return nil, err
	}
	if _, err := o.run(ctx, cmd, args); err != nil {
		return nil, err
	}
	res.Message = fmt.Sprintf("Deleted group %s.", r.Group)
	return res, nil
}

// RemoveMember implements Operator with LeaveGroup v5 naming the member (by instance id for a
// static member, as Kafka's Admin does).
func (o *CLIOperator) RemoveMember(ctx context.Context, r MemberRequest) (*ActionResult, error) {
	if r.GroupType == "share" {
		return nil, errShare
	}
	if r.GroupType == "streams" {
		return nil, &ActionError{Msg: "Kafka has no administrative removal of a streams group member (KIP-1071): stop or restart the member's Kafka Streams instance; its session then expires"}
	}
	who := "member_id=" + r.MemberID
	if r.InstanceID != "" {
		who = "group_instance_id=" + r.InstanceID
	}
	reason := r.Reason
	if reason == "" {
		reason = "removed by an operator (muster console)"
	}
	res := &ActionResult{DryRun: !r.Execute,
		Command: fmt.Sprintf("LeaveGroup v5 group=%s members=[%s reason=%q] (Kafka Admin removeMembersFromConsumerGroup)", r.Group, who, reason)}
	if !r.Execute {
		res.Message = fmt.Sprintf("Dry run: member %s would leave group %s (its partitions are reassigned); nothing was changed.", r.MemberID, r.Group)
		return res, nil
	}
	if o.Bootstrap == "" {
		return nil, errNoListener
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.Bootstrap), kgo.ClientID("muster-console"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = r.Group
	m := kmsg.NewLeaveGroupRequestMember()
	if r.InstanceID != "" {
		inst := r.InstanceID
		m.InstanceID = &inst
	} else {
		m.MemberID = r.MemberID
	}
	m.Reason = &reason
	req.Members = []kmsg.LeaveGroupRequestMember{m}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	code := resp.ErrorCode
	if code == 0 && len(resp.Members) == 1 {
		code = resp.Members[0].ErrorCode
	}
	if code != 0 {
		e := kerr.ErrorForCode(code)
		msg := fmt.Sprintf("LeaveGroup for member %s of group %s failed: %v", r.MemberID, r.Group, e)
		if code == kerr.UnknownMemberID.Code && r.GroupType != "classic" {
			msg += " (Kafka's LeaveGroup removes only classic-protocol or static members of a consumer group)"
		}
		return nil, &ActionError{Msg: msg}
	}
	res.Message = fmt.Sprintf("Member %s left group %s.", r.MemberID, r.Group)
	return res, nil
}
