package member

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// findCoordinator asks any broker for the group's coordinator
// (FindCoordinator, key type 0 = group) and returns its node id.
func (m *Member) findCoordinator(ctx context.Context) (int32, error) {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 0
	req.CoordinatorKey = m.cfg.GroupID
	req.CoordinatorKeys = []string{m.cfg.GroupID}
	resp, err := req.RequestWith(rctx, m.cl)
	if err != nil {
		return -1, err
	}
	code, node := resp.ErrorCode, resp.NodeID
	if len(resp.Coordinators) > 0 {
		code, node = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return -1, err
	}
	return node, nil
}

// discover looks the coordinator up; on failure it retries after the
// back-off.
func (m *Member) discover(ctx context.Context) {
	id, err := m.findCoordinator(ctx)
	now := m.clock.Now()
	if err != nil {
		if ctx.Err() == nil {
			m.log.Debug("coordinator lookup failed", "err", err)
		}
		m.ls.nextCoord = now.Add(m.ls.backoff)
		m.ls.backoff = min(2*m.ls.backoff, max(maxRetryBackoff, m.cfg.RetryBackoff))
		return
	}
	m.ls.coordID = id
	m.ls.nextHB = now
	m.publish(nil)
}

// coordinator returns the coordinator the loop knows, or looks it up.
func (m *Member) coordinator(ctx context.Context) (int32, error) {
	m.mu.Lock()
	id := m.snap.coordID
	m.mu.Unlock()
	if id >= 0 {
		return id, nil
	}
	return m.findCoordinator(ctx)
}
