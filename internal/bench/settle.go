package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A join storm ends when the group has settled, checked on both sides:
//
//   - by its members (tracker): every member at one epoch (generation) above 0, every partition
//     of the topic owned by exactly one member, and the split balanced (each member owns
//     ⌊partitions/members⌋ or ⌈partitions/members⌉);
//   - by the broker (ConsumerGroupDescribe for a KIP-848 group, DescribeGroups for a classic
//     one): the group is Stable with every member, and each member's assignment is that
//     balanced split; for a KIP-848 group also its epoch equals its target assignment epoch and
//     every member is at that epoch, the epoch the members report.
//
// The members' view alone is not enough: a KIP-848 group in which every member sits at epoch 1
// while the first member owns all partitions (the target assignment not yet computed; Kafka's
// assignment interval defers it) satisfies "one epoch, every partition owned once" long before
// the group is settled.

// balance is the balanced split of partitions over members: each owns lo or hi partitions.
func balance(members int, partitions int32) (lo, hi int) {
	lo = int(partitions) / members
	hi = lo
	if int(partitions)%members != 0 {
		hi++
	}
	return lo, hi
}

// consumerGroupSettled describes a KIP-848 group and reports whether the broker shows it settled
// at epoch: Stable, group epoch = target assignment epoch = epoch, members members, each at that
// epoch owning a balanced share of partitions of topic partitions, every partition once. why says
// what is missing.
func consumerGroupSettled(ctx context.Context, c *conn, group string, epoch int32, members int, partitions int32) (ok bool, why string, err error) {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	r, err := c.do(ctx, req)
	if err != nil {
		return false, "", err
	}
	resp := r.(*kmsg.ConsumerGroupDescribeResponse)
	if len(resp.Groups) != 1 {
		return false, "", fmt.Errorf("ConsumerGroupDescribe: %d groups in the answer", len(resp.Groups))
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		return false, "", fmt.Errorf("ConsumerGroupDescribe: %w", err)
	}
	switch {
	case g.State != "Stable":
		return false, "state " + g.State, nil
	case g.Epoch != g.AssignmentEpoch || g.Epoch != epoch:
		return false, fmt.Sprintf("group epoch %d, assignment epoch %d, members at %d", g.Epoch, g.AssignmentEpoch, epoch), nil
	case len(g.Members) != members:
		return false, fmt.Sprintf("%d of %d members", len(g.Members), members), nil
	}
	lo, hi := balance(members, partitions)
	owned := make([]int, partitions)
	for _, m := range g.Members {
		if m.MemberEpoch != g.Epoch {
			return false, fmt.Sprintf("member at epoch %d, group at %d", m.MemberEpoch, g.Epoch), nil
		}
		n := 0
		for _, t := range m.Assignment.TopicPartitions {
			for _, p := range t.Partitions {
				if p >= 0 && p < partitions {
					owned[p]++
				}
				n++
			}
		}
		if n < lo || n > hi {
			return false, fmt.Sprintf("a member owns %d partitions, balanced is %d–%d", n, lo, hi), nil
		}
	}
	return coveredOnce(owned)
}

// classicGroupSettled describes a classic group and reports whether the broker shows it settled:
// Stable with members members whose assignments split the partitions of the topic evenly, every
// partition once.
func classicGroupSettled(ctx context.Context, c *conn, group string, members int, partitions int32) (ok bool, why string, err error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	r, err := c.do(ctx, req)
	if err != nil {
		return false, "", err
	}
	resp := r.(*kmsg.DescribeGroupsResponse)
	if len(resp.Groups) != 1 {
		return false, "", fmt.Errorf("DescribeGroups: %d groups in the answer", len(resp.Groups))
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		return false, "", fmt.Errorf("DescribeGroups: %w", err)
	}
	if g.State != "Stable" {
		return false, "state " + g.State, nil
	}
	if len(g.Members) != members {
		return false, fmt.Sprintf("%d of %d members", len(g.Members), members), nil
	}
	lo, hi := balance(members, partitions)
	owned := make([]int, partitions)
	for _, m := range g.Members {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(m.MemberAssignment); err != nil {
			return false, "", fmt.Errorf("DescribeGroups: member assignment: %w", err)
		}
		n := 0
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				if p >= 0 && p < partitions {
					owned[p]++
				}
				n++
			}
		}
		if n < lo || n > hi {
			return false, fmt.Sprintf("a member owns %d partitions, balanced is %d–%d", n, lo, hi), nil
		}
	}
	return coveredOnce(owned)
}

func coveredOnce(owned []int) (bool, string, error) {
	for p, n := range owned {
		if n != 1 {
			return false, fmt.Sprintf("partition %d owned %d times", p, n), nil
		}
	}
	return true, "", nil
}

// settler ends a join storm: the storm's members report what they see (update), and once the
// tracker shows the group settled from the members' side, settler asks the broker (check) and,
// when the broker agrees, records the time since start and calls stop.
type settler struct {
	mu      sync.Mutex
	tr      *tracker
	start   time.Time
	check   func(ctx context.Context, epoch int32) (ok bool, why string, err error)
	stop    func()
	kick    chan struct{}
	settled time.Duration // 0 until settled
	why     string        // what the broker's view lacked at the last check
	checks  int           // describe requests sent
}

func newSettler(tr *tracker, start time.Time, stop func(), check func(ctx context.Context, epoch int32) (bool, string, error)) *settler {
	return &settler{tr: tr, start: start, check: check, stop: stop, kick: make(chan struct{}, 1)}
}

// update applies a member's report to the tracker and wakes the checker when the members see
// the group settled.
func (s *settler) update(report func(tr *tracker)) {
	s.mu.Lock()
	report(s.tr)
	_, ok := s.tr.settled()
	done := s.settled != 0
	s.mu.Unlock()
	if ok && !done {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// run checks with the broker whenever woken, and every 5 ms while the members see the group
// settled, until it is settled or ctx ends.
func (s *settler) run(ctx context.Context) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-tick.C:
		}
		s.mu.Lock()
		epoch, ok := s.tr.settled()
		s.mu.Unlock()
		if !ok {
			continue
		}
		settled, why, err := s.check(ctx, epoch)
		at := time.Since(s.start)
		s.mu.Lock()
		s.checks++
		if err != nil {
			why = err.Error()
		}
		s.why = why
		if settled {
			s.settled = at
		}
		s.mu.Unlock()
		if settled {
			s.stop()
			return
		}
	}
}

// result returns the settle time (0 if not settled), the last reason it was not and the number
// of describe requests.
func (s *settler) result() (time.Duration, string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled, s.why, s.checks
}
