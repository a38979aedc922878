package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Leave epochs (KIP-848/KIP-1071): -1 leaves; -2 is a static member's
// temporary leave (its assignment is kept for the session timeout).
const (
	leaveEpoch       = -1
	staticLeaveEpoch = -2
)

// heartbeatRequest builds the next StreamsGroupHeartbeat. Member metadata
// and the topology are sent when joining (epoch 0); the owned task lists are
// always sent (all three non-null).
func (m *Member) heartbeatRequest(epoch int32) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = m.ls.memberID
	req.MemberEpoch = epoch
	req.EndpointInformationEpoch = m.ls.endpointEpoch
	req.RebalanceTimeoutMillis = -1
	if m.cfg.InstanceID != "" {
		s := m.cfg.InstanceID
		req.InstanceID = &s
	}
	if epoch == 0 {
		req.RebalanceTimeoutMillis = int32(min(m.cfg.RebalanceTimeout.Milliseconds(), 1<<31-1))
		req.Topology = m.topology
		p := m.cfg.ProcessID
		req.ProcessID = &p
		if m.cfg.RackID != "" {
			s := m.cfg.RackID
			req.RackID = &s
		}
		if m.endpoint != nil {
			ep := kmsg.NewStreamsGroupHeartbeatRequestUserEndpoint()
			ep.Host, ep.Port = m.endpoint.host, m.endpoint.port
			req.UserEndpoint = &ep
		}
		keys := make([]string, 0, len(m.cfg.ClientTags))
		for k := range m.cfg.ClientTags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
		for _, k := range keys {
			t := kmsg.NewStreamsGroupHeartbeatRequestClientTag()
			t.Key, t.Value = k, m.cfg.ClientTags[k]
			req.ClientTags = append(req.ClientTags, t)
		}
	}
	if epoch >= 0 {
		req.ActiveTasks = m.ls.owned.Active.toWire()
		req.StandbyTasks = m.ls.owned.Standby.toWire()
		req.WarmupTasks = m.ls.owned.Warmup.toWire()
	}
	req.ShutdownApplication = m.ls.shutdownSend
	return req
}

// heartbeat sends one heartbeat and applies its response. It returns a
// non-nil error only for a fatal error code.
func (m *Member) heartbeat(ctx context.Context) error {
	req := m.heartbeatRequest(m.ls.epoch)
	kresp, err := m.request(ctx, m.ls.coordID, req)
	now := m.clock.Now()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		// Network error: the connection to the coordinator is suspect.
		m.log.Debug("heartbeat failed", "err", err)
		m.coordinatorLost(now)
		m.retryLater(now)
		return nil
	}
	resp := kresp.(*kmsg.StreamsGroupHeartbeatResponse)
	throttle := time.Duration(resp.ThrottleMillis) * time.Millisecond
	switch code := resp.ErrorCode; code {
	case 0:
		m.ls.backoff = m.cfg.RetryBackoff
		m.applyResponse(resp, now, throttle)
		return nil
	case kerr.FencedMemberEpoch.Code, kerr.UnknownMemberID.Code:
		m.log.Info("member fenced; rejoining", "member", m.ls.memberID, "epoch", m.ls.epoch, "err", kerr.ErrorForCode(code))
		m.dropAll(true)
		m.ls.epoch, m.ls.acked = 0, false
		m.ls.nextHB = now.Add(throttle)
		m.publish(nil)
		return nil
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code:
		m.coordinatorLost(now)
		m.ls.nextHB = now.Add(throttle)
		return nil
	case kerr.CoordinatorLoadInProgress.Code:
		m.retryLater(now.Add(throttle))
		return nil
	default:
		return responseError(code, resp.ErrorMessage)
	}
}

// responseError is the kerr error of code, with the broker's message.
func responseError(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// applyResponse records a successful heartbeat and reconciles the
// assignment: revoke first, then assign.
func (m *Member) applyResponse(resp *kmsg.StreamsGroupHeartbeatResponse, now time.Time, throttle time.Duration) {
	if resp.MemberID != "" {
		m.ls.memberID = resp.MemberID
	}
	m.ls.epoch = resp.MemberEpoch
	m.ls.acked = true
	m.ls.endpointEpoch = resp.EndpointInformationEpoch
	m.ls.interval = time.Duration(resp.HeartbeatIntervalMillis) * time.Millisecond
	m.ls.nextHB = now.Add(max(m.ls.interval, throttle))
	if resp.TopologyDescriptionRequired {
		m.ls.push.required = true
	}
	status := make([]Status, 0, len(resp.Status))
	shutdown := false
	for _, s := range resp.Status {
		status = append(status, Status{Code: StatusCode(s.StatusCode), Detail: s.StatusDetail})
		shutdown = shutdown || StatusCode(s.StatusCode) == StatusShutdownApplication
	}
	m.publish(func(s *snapshot) { s.status = status; s.heartbeats++ })

	if resp.ActiveTasks != nil || resp.StandbyTasks != nil || resp.WarmupTasks != nil {
		target := Assignment{
			Active:  taskSetFromWire(resp.ActiveTasks),
			Standby: taskSetFromWire(resp.StandbyTasks),
			Warmup:  taskSetFromWire(resp.WarmupTasks),
		}
		if !target.Equal(m.ls.owned) {
			revoked := m.ls.owned.minus(target)
			added := target.minus(m.ls.owned)
			if !revoked.Empty() {
				m.callRevoked(revoked)
				m.ls.owned = m.ls.owned.minus(revoked)
				m.publish(nil)
			}
			m.callAssigned(added)
			m.ls.owned = target
			m.publish(nil)
			// Acknowledge the new assignment at once.
			m.ls.nextHB = now.Add(throttle)
		}
	}
	if shutdown && !m.ls.shutdownSeen {
		m.ls.shutdownSeen = true
		if m.cfg.OnShutdownRequested != nil {
			m.cfg.OnShutdownRequested()
		}
	}
}

// leave revokes every task and, if the member is in the group, sends the
// leave heartbeat.
func (m *Member) leave(ctx context.Context) error {
	m.dropAll(false)
	m.ls.push.required = false
	if !m.ls.acked || m.ls.coordID < 0 {
		m.publish(nil)
		return nil
	}
	epoch := int32(leaveEpoch)
	if m.cfg.InstanceID != "" {
		epoch = staticLeaveEpoch
	}
	req := m.heartbeatRequest(epoch)
	m.ls.epoch, m.ls.acked = 0, false
	m.publish(nil)
	kresp, err := m.request(ctx, m.ls.coordID, req)
	if err != nil {
		return fmt.Errorf("member: leave group: %w", err)
	}
	resp := kresp.(*kmsg.StreamsGroupHeartbeatResponse)
	if err := responseError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		// A member the coordinator already dropped has left.
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.FencedMemberEpoch) {
			return nil
		}
		return fmt.Errorf("member: leave group: %w", err)
	}
	return nil
}
