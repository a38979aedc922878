package member

import (
	"context"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pushState is the KIP-1331 client-side push state.
type pushState struct {
	// required is TopologyDescriptionRequired as recorded from heartbeats.
	required bool
	// inFlight is true while a push request is outstanding.
	inFlight bool
	// nextAttempt delays the next push (ThrottleTimeMs, retry back-off).
	nextAttempt time.Time
}

// pushResult is the completion of one push.
type pushResult struct {
	coordID int32
	resp    *kmsg.StreamsGroupTopologyDescriptionUpdateResponse
	err     error
}

// pushWanted reports whether a push would be sent if its time had come:
// KIP-1331 client rule 5 minus the throttle.
func (m *Member) pushWanted() bool {
	return m.cfg.pushEnabled() && m.cfg.TopologyDescription != nil && m.ls.push.required &&
		!m.ls.push.inFlight && m.ls.coordID >= 0 && m.ls.acked && m.ls.memberID != ""
}

// maybePush starts a StreamsGroupTopologyDescriptionUpdate (API key 93) on
// its own goroutine when KIP-1331's conditions hold; the result comes back
// on m.pushResults.
func (m *Member) maybePush(ctx context.Context) {
	if !m.pushWanted() || m.clock.Now().Before(m.ls.push.nextAttempt) {
		return
	}
	req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = m.ls.memberID
	req.TopologyEpoch = m.cfg.Topology.Epoch
	req.TopologyDescription = m.cfg.TopologyDescription.ToRequest()
	coord := m.ls.coordID
	m.ls.push.inFlight = true
	go func() {
		kresp, err := m.request(ctx, coord, req)
		r := pushResult{coordID: coord, err: err}
		if err == nil {
			r.resp = kresp.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
		}
		m.pushResults <- r // buffered: at most one push is in flight
	}()
}

// pushCompleted applies KIP-1331 "Error Handling and Retries".
func (m *Member) pushCompleted(r pushResult) {
	m.ls.push.inFlight = false
	now := m.clock.Now()
	if r.err != nil && isBrokerTooOld(r.err) {
		// The coordinator does not know API key 93 at all: Kafka's client
		// sees UNSUPPORTED_VERSION, a non-retriable error.
		m.ls.push.required = false
		m.log.Warn("topology description push failed; not retrying until the broker asks again",
			"topologyEpoch", m.cfg.Topology.Epoch, "err", kerr.UnsupportedVersion)
		m.publish(func(s *snapshot) { s.pushErrors++ })
		return
	}
	if r.err != nil {
		// Network error: keep the flag, retry on a later iteration.
		m.log.Debug("topology description push failed", "err", r.err)
		m.ls.push.nextAttempt = now.Add(m.cfg.RetryBackoff)
		m.publish(func(s *snapshot) { s.pushErrors++ })
		return
	}
	if r.resp.ThrottleMillis > 0 {
		m.ls.push.nextAttempt = now.Add(time.Duration(r.resp.ThrottleMillis) * time.Millisecond)
	}
	code := r.resp.ErrorCode
	switch code {
	case 0:
		m.ls.push.required = false
		m.log.Debug("topology description pushed", "topologyEpoch", m.cfg.Topology.Epoch)
		m.publish(func(s *snapshot) { s.pushes++ })
		return
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code:
		if m.ls.coordID == r.coordID {
			m.ls.coordID = -1
			m.ls.nextCoord = now
		}
	case kerr.CoordinatorLoadInProgress.Code:
		m.ls.push.nextAttempt = maxTime(m.ls.push.nextAttempt, now.Add(m.cfg.RetryBackoff))
	case kerr.UnknownMemberID.Code:
		// The heartbeat path rejoins; do not push at a fenced member id.
		m.ls.push.required = false
	default:
		m.ls.push.required = false
		m.log.Warn("topology description push failed; not retrying until the broker asks again",
			"topologyEpoch", m.cfg.Topology.Epoch, "err", responseError(code, r.resp.ErrorMessage))
	}
	m.publish(func(s *snapshot) { s.pushErrors++ })
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// isBrokerTooOld recognises franz-go's (unexported) error for a request key
// the broker did not advertise in ApiVersions.
func isBrokerTooOld(err error) bool {
	return strings.Contains(err.Error(), "broker is too old")
}
