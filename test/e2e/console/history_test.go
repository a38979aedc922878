package console

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type apiHistory struct {
	Events []struct {
		Seq      int64 `json:"seq"`
		OldEpoch int32 `json:"old_epoch"`
		NewEpoch int32 `json:"new_epoch"`
		Causes   []struct {
			Cause  string `json:"cause"`
			Member string `json:"member"`
		} `json:"causes"`
	} `json:"events"`
}

// TestHistorySurvivesSIGKILL: franz-go KIP-848 consumers join and leave a group on a real
// `muster serve`; its rebalance history is durable: after SIGKILL and a restart on the same data
// dir the history is the same, and `muster consumer-groups --describe --history` prints it.
func TestHistorySurvivesSIGKILL(t *testing.T) {
	p := serve(t, "group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=100",
		"group.consumer.assignment.interval.ms=0")
	adm := newAdm(t, p)
	if _, err := adm.CreateTopic(ctxT(t, 10*time.Second), 4, 1, nil, "hist"); err != nil {
		t.Fatal(err)
	}
	a := consumer848(t, p.addr, "durable", "hist", "app-a")
	var h apiHistory
	eventually(t, 20*time.Second, "the first join", func() bool { return tryJSON(p.url("/api/v1/groups/durable/history"), &h) && len(h.Events) >= 1 })
	b := consumer848(t, p.addr, "durable", "hist", "app-b")
	eventually(t, 20*time.Second, "the second join", func() bool { return tryJSON(p.url("/api/v1/groups/durable/history"), &h) && len(h.Events) >= 2 })
	b.LeaveGroup()
	eventually(t, 20*time.Second, "the leave", func() bool {
		tryJSON(p.url("/api/v1/groups/durable/history"), &h)
		return len(h.Events) >= 3 && h.Events[0].Causes[0].Cause == "MEMBER_LEFT"
	})
	_ = a
	var before apiHistory
	getJSON(t, p.url("/api/v1/groups/durable/history"), &before)

	p.kill()
	p.start(t)
	var after apiHistory
	getJSON(t, p.url("/api/v1/groups/durable/history"), &after)
	// The group may rebalance again after the restart (the consumer rejoins): the events from
	// before are all there, unchanged.
	if len(after.Events) < len(before.Events) || !reflect.DeepEqual(after.Events[len(after.Events)-len(before.Events):], before.Events) {
		t.Fatalf("history after SIGKILL and restart:\n%+v\nbefore:\n%+v", after.Events, before.Events)
	}
	out, err := muster(t, "consumer-groups", "--bootstrap-server", p.addr, "--http-server", p.http, "--describe", "--history", "--group", "durable")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GROUP", "CAUSE", "MEMBER_JOINED", "MEMBER_LEFT", "durable", "0→1"} {
		if !strings.Contains(out, want) {
			t.Errorf("--history output lacks %q:\n%s", want, out)
		}
	}
}
