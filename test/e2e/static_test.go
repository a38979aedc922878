package e2e

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/testutil"
)

// TestStaticMemberRestartWithoutRebalance (KIP-345): a static franz-go member closes (static
// members do not leave) and a replacement with the same group.instance.id joins; the group does
// not rebalance: the other member sees no revocation or new assignment, and the replacement
// gets the partitions the old instance had.
func TestStaticMemberRestartWithoutRebalance(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	clProduceN(t, ctx, b.Addr(), "static-topic", 4, 40, "x")

	var mu sync.Mutex
	events := map[string][]string{} // consumer → "assigned:p,p" / "revoked:p,p"
	record := func(who, what string, m map[string][]int32) {
		var ps []int
		for _, p := range m["static-topic"] {
			ps = append(ps, int(p))
		}
		sort.Ints(ps)
		mu.Lock()
		events[who] = append(events[who], what+":"+fmtInts(ps))
		mu.Unlock()
	}
	member := func(who string, instance string) *kgo.Client {
		opts := []kgo.Opt{kgo.ConsumerGroup("static-group"), kgo.ConsumeTopics("static-topic"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100 * time.Millisecond),
			kgo.SessionTimeout(10 * time.Second), kgo.Balancers(kgo.RangeBalancer()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { record(who, "assigned", m) }),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { record(who, "revoked", m) }),
		}
		if instance != "" {
			opts = append(opts, kgo.InstanceID(instance))
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(b.Addr()))...)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for ctx.Err() == nil && !cl.PollFetches(ctx).IsClientClosed() {
			}
		}()
		return cl
	}
	assignedNow := func(who string) string {
		mu.Lock()
		defer mu.Unlock()
		ev := events[who]
		for i := len(ev) - 1; i >= 0; i-- {
			if len(ev[i]) > 9 && ev[i][:9] == "assigned:" {
				return ev[i][9:]
			}
		}
		return ""
	}
	a := member("a", "inst-a")
	other := member("other", "")
	defer other.Close()
	// Wait until the two members split the four partitions.
	for ctx.Err() == nil {
		pa, po := assignedNow("a"), assignedNow("other")
		if len(pa) > 0 && len(po) > 0 && len(pa)+len(po) == len("0,1")+len("2,3") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // let any trailing rebalance settle
	mu.Lock()
	otherBefore := append([]string(nil), events["other"]...)
	mu.Unlock()
	aParts := assignedNow("a")

	a.Close() // static: no LeaveGroup
	a2 := member("a2", "inst-a")
	defer a2.Close()
	for ctx.Err() == nil && assignedNow("a2") == "" {
		time.Sleep(20 * time.Millisecond)
	}
	if got := assignedNow("a2"); got != aParts {
		t.Fatalf("replacement static member got %q, the old instance had %q", got, aParts)
	}
	time.Sleep(500 * time.Millisecond) // a rebalance, if one were triggered, would show by now
	mu.Lock()
	defer mu.Unlock()
	if len(events["other"]) != len(otherBefore) {
		t.Fatalf("the other member saw a rebalance: before %v, after %v", otherBefore, events["other"])
	}
}

func fmtInts(ps []int) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ","
		}
		s += string(rune('0' + p))
	}
	return s
}
