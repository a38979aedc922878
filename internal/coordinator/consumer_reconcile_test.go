package coordinator

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestCGStillUnreleasedMatchesNextAssignment: whenever the UNRELEASED_PARTITIONS shortcut says
// a heartbeat changes nothing, the full computation (nextAssignment) agrees; random joins,
// leaves and heartbeat orders over three topics, then replay equivalence.
func TestCGStillUnreleasedMatchesNextAssignment(t *testing.T) {
	shortcuts := 0
	for seed := int64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		h := newCGHarness(t)
		h.topics.Add("t1", 7)
		h.topics.Add("t2", 5)
		h.topics.Add("t3", 3)
		var clients []*cgClient
		for step := 0; step < 200; step++ {
			live := []*cgClient{}
			for _, c := range clients {
				if !c.gone {
					live = append(live, c)
				}
			}
			switch r := rng.Intn(20); {
			case r == 0 || len(live) == 0:
				names := []string{"t1", "t2", "t3"}[:1+rng.Intn(3)]
				clients = append(clients, h.joinClient("g", fmt.Sprintf("m%d", len(clients)), names...))
			case r == 1 && len(live) > 1:
				c := live[rng.Intn(len(live))]
				h.hb(hbReq("g", c.id, -1, nil))
				c.gone = true
			default:
				c := live[rng.Intn(len(live))]
				g := h.group("g")
				cur := g.current(c.id)
				if cur.state == MemberUnreleasedPartitions && g.stillUnreleased(c.id, cur, g.assignmentEpoch, g.targets[c.id]) {
					shortcuts++
					next := g.nextAssignment(c.id, cur, g.assignmentEpoch, g.targets[c.id], c.owned)
					if !equalCurrent(cur, next) {
						t.Fatalf("seed %d step %d: shortcut for %s but nextAssignment gives %+v, current %+v", seed, step, c.id, next, cur)
					}
				}
				h.beat(c)
				checkNoDoubleOwnership(t, clients)
			}
		}
		h.checkReplayEquivalence(seed)
	}
	if shortcuts == 0 {
		t.Fatalf("the shortcut was never taken")
	}
	t.Logf("%d shortcuts checked", shortcuts)
}
