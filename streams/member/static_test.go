package member_test

import (
	"context"
	"testing"
	"time"

	"github.com/muster-io/muster/streams/member"
)

// TestStaticMemberRestart: a static member (InstanceID) leaves with epoch
// -2, so the coordinator keeps its assignment; a new incarnation with the
// same instance id gets its tasks back while the other member's tasks stay
// put.
func TestStaticMemberRestart(t *testing.T) {
	e := newEnv(t)
	e.createTopic("words", 6)
	e.createTopic("counts", 4)
	all := allTasks()
	static := func(id string) func(*member.Config) {
		return func(c *member.Config) { c.InstanceID = id }
	}
	a := e.start("static", "a", nil, static("instance-a"))
	b := e.start("static", "b", nil, static("instance-b"))
	eventually(t, "split", func() bool { return partition(all, a, b) })
	aTasks, bTasks := a.Assignment().Active, b.Assignment().Active

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatalf("static leave: %v", err)
	}
	g := describe(t, e, "static")
	if len(g.Members) != 2 {
		t.Fatalf("after a static leave the group has %d members, want 2 (the static member is kept)", len(g.Members))
	}
	// The join response already carries all the old tasks (the coordinator keeps a static
	// member's assignment across the restart), so the first OnAssigned call has them all.
	first := make(chan member.TaskSet, 1)
	a2 := e.start("static", "a2", nil, func(c *member.Config) {
		c.InstanceID = "instance-a"
		c.OnAssigned = func(active, _, _ member.TaskSet) {
			select {
			case first <- active:
			default:
			}
		}
	})
	eventually(t, "new incarnation gets the old tasks", func() bool { return a2.Assignment().Active.Equal(aTasks) })
	select {
	case got := <-first:
		if !got.Equal(aTasks) {
			t.Fatalf("first assignment of the new incarnation %v, want all the old tasks %v at once", got, aTasks)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnAssigned was not called")
	}
	if !b.Assignment().Active.Equal(bTasks) {
		t.Fatalf("other member's tasks moved: %v, was %v", b.Assignment().Active, bTasks)
	}
}
