package e2e

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// logBuffer collects a broker's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything logged so far.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines returns the INFO-or-above lines naming member.
func (l *logBuffer) lines(member string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line+" ", "member="+member+" ") && !strings.Contains(line, "level=DEBUG") {
			out = append(out, line)
		}
	}
	return out
}

// expectLog fails unless some line about member contains want, and no line about it contains
// "fenced" when fenced is false.
func expectLog(t *testing.T, logs *logBuffer, member, want string, fenced bool) {
	t.Helper()
	lines := logs.lines(member)
	found := false
	for _, l := range lines {
		found = found || strings.Contains(l, want)
		if !fenced && strings.Contains(l, "fenced") {
			t.Errorf("member %s left but was logged as fenced: %s", member, l)
		}
	}
	if !found {
		t.Errorf("no log line %q for member %s; lines:\n%s", want, member, strings.Join(lines, "\n"))
	}
}

// TestGroupLeavesAreLoggedAsLeaves: KIP-848 and KIP-1071 members that leave (epoch -1, a static
// member's -1, LeaveGroup) are logged at INFO as having left the group; "fenced" is kept for
// members removed by the coordinator (session expiry).
func TestGroupLeavesAreLoggedAsLeaves(t *testing.T) {
	logs := &logBuffer{}
	clock := coordtest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := testutil.StartLogged(t, t.TempDir(), clock, logs, "group.streams.initial.rebalance.delay.ms=0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "static-t"); err != nil {
		t.Fatal(err)
	}
	br, _ := nrBroker(t, ctx, b.Addr())
	const group = "logged"
	leave := func(m *smember) {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, m.id, -1
		if m.instance != "" {
			req.InstanceID = &m.instance
		}
		if resp, err := req.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
			t.Fatalf("leave %s: %v %+v", m.id, err, resp)
		}
	}
	dyn := &smember{id: "leaving-dynamic"}
	stat := &smember{id: "leaving-static", instance: "inst-s"}
	viaLeaveGroup := &smember{id: "leaving-by-leavegroup", instance: "inst-l"}
	expiring := &smember{id: "expiring"}
	for _, m := range []*smember{dyn, stat, viaLeaveGroup, expiring} {
		m.ok(t, ctx, cl, group, 0)
	}
	leave(dyn)
	leave(stat)
	if rs, err := adm.LeaveGroup(ctx, kadm.LeaveGroup(group).InstanceIDs("inst-l")); err != nil || rs.Error() != nil {
		t.Fatalf("LeaveGroup: %v %v", err, rs.Error())
	}
	// A streams member leaves; another one's session expires.
	sLeaving := &nrMember{id: "streams-leaving", sources: []string{"static-t"}}
	sExpiring := &nrMember{id: "streams-expiring", sources: []string{"static-t"}}
	sLeaving.beat(t, ctx, br, "logged-streams")
	sExpiring.beat(t, ctx, br, "logged-streams")
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "logged-streams", sLeaving.id, -1
	if resp, err := req.RequestWith(ctx, br); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("streams leave: %v %+v", err, resp)
	}
	clock.Advance(46 * time.Second)
	eventually(t, "session expiries logged", func() bool {
		return len(logs.lines(expiring.id)) > 0 && len(logs.lines(sExpiring.id)) > 0 &&
			strings.Contains(strings.Join(logs.lines(expiring.id), "\n"), "fenced") &&
			strings.Contains(strings.Join(logs.lines(sExpiring.id), "\n"), "fenced")
	})

	expectLog(t, logs, dyn.id, `msg="consumer group member left the group"`, false)
	expectLog(t, logs, stat.id, `msg="consumer group static member left the group"`, false)
	expectLog(t, logs, viaLeaveGroup.id, `msg="consumer group member left the group through LeaveGroup"`, false)
	expectLog(t, logs, expiring.id, `msg="consumer group member fenced"`, true)
	expectLog(t, logs, expiring.id, `reason="its session expired"`, true)
	expectLog(t, logs, sLeaving.id, `msg="streams group member left the group"`, false)
	expectLog(t, logs, sExpiring.id, `msg="streams group member fenced"`, true)
}
