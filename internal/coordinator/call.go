package coordinator

import "github.com/twmb/franz-go/pkg/kmsg"

// Meta describes the request behind an operation.
type Meta struct {
	// APIVersion is the request version, for handlers that branch on it.
	APIVersion int16
	ClientID   *string
	ClientHost string
	// DescribableTopic reports whether the request's principal may DESCRIBE a topic (the
	// authorizer with the request's context, as Kafka hands the coordinator). A KIP-848 regex
	// refresh that the request triggers keeps only such topics (Kafka's
	// filterTopicDescribeAuthorizedTopics). nil allows every topic (no authorizer).
	DescribableTopic func(topic string) bool
}

// describable is m's DescribableTopic (nil for a nil Meta: every topic).
func (m *Meta) describable() func(string) bool {
	if m == nil {
		return nil
	}
	return m.DescribableTopic
}

// Pending is a call whose response is set and that waits for the records written before it to
// become durable. The driver of the shard (the engine, or a test kit) implements it.
type Pending interface {
	// Release sends the response set by Set: every record written before it is durable.
	Release()
	// Fail sends err instead of the response: the batch holding those records was not made
	// durable (NOT_COORDINATOR), or the shard unloaded before the call was answered.
	Fail(err error)
}

// Waiter receives one call's response of type T. The core sets it once (Call.Reply or
// Call.Fail) and hands the Waiter to the driver as a Pending reply in its Effects.
type Waiter[T any] interface {
	Pending
	Set(resp T, err error)
}

// Call is one request whose response of type T an operation delivers: at once, or from a later
// operation or timer (a JoinGroup completes when its rebalance does, so a member keeps its call).
type Call[T any] struct {
	Meta
	w       Waiter[T]
	replied bool
}

// NewCall binds a call to the waiter that receives its response.
func NewCall[T any](meta Meta, w Waiter[T]) *Call[T] { return &Call[T]{Meta: meta, w: w} }

// Replied reports whether the call has its response (it may not be released yet).
func (c *Call[T]) Replied() bool { return c == nil || c.replied }

// Replies collects the replies of a shard's operations into its Effects; *State is one (any
// shard the engine drives has one).
type Replies interface {
	AddReply(p Pending)
}

// Reply answers c with resp; the response leaves once every record written before it is
// durable. A second answer is ignored.
func (c *Call[T]) Reply(to Replies, resp T) {
	if c.Replied() {
		return
	}
	c.replied = true
	c.w.Set(resp, nil)
	to.AddReply(c.w)
}

// Fail answers c with an error instead of a response (same release rule as Reply).
func (c *Call[T]) Fail(to Replies, err error) {
	if c.Replied() {
		return
	}
	c.replied = true
	var zero T
	c.w.Set(zero, err)
	to.AddReply(c.w)
}

// Effects are what a shard produced since the driver last took them: the records to make
// durable (in write order; every one is already replayed into the state) and the replies to
// release after them, in the order they were given.
type Effects struct {
	Records []Record
	Replies []Pending
}

// Empty reports whether there is nothing to do.
func (e *Effects) Empty() bool { return len(e.Records) == 0 && len(e.Replies) == 0 }

// The calls of the classic group RPCs, which a member keeps while its JoinGroup or SyncGroup
// waits for the rebalance.
type (
	JoinCall      = Call[*kmsg.JoinGroupResponse]
	SyncCall      = Call[*kmsg.SyncGroupResponse]
	HeartbeatCall = Call[*kmsg.HeartbeatResponse]
	LeaveCall     = Call[*kmsg.LeaveGroupResponse]
)

// Ack is the response of an operation that answers nothing but success (or an error).
type Ack struct{}
