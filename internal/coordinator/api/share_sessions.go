package api

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator"
)

// Share sessions (KIP-932; Kafka's ShareSessionCache in SharePartitionManager): one per (group,
// member) on this broker, holding the partitions the member fetches and the epoch its next
// ShareFetch or ShareAcknowledge must carry. Epoch 0 opens a session (replacing the member's
// previous one), -1 closes it, anything else must match. A session belongs to the connection
// that opened it: when the connection closes, the session ends and the records its member holds
// on the session's partitions are released (Kafka's ConnectionDisconnectListener). Sessions are
// soft state: a restart forgets them, as Kafka's broker does.

type shareSessionKey struct{ group, member string }

type shareSession struct {
	key   shareSessionKey
	epoch int32 // the epoch the next request must carry
	parts []coordinator.SharePartitionID
	// update marks partitions the next response must include even without data (new in the
	// session, or answered with an error last time; Kafka's requiresUpdateInResponse).
	update map[coordinator.SharePartitionID]bool
	conn   <-chan struct{}
}

type shareSessions struct {
	mu    sync.Mutex
	byKey map[shareSessionKey]*shareSession
	conns map[<-chan struct{}]bool
}

// nextShareEpoch is Kafka's ShareRequestMetadata.nextEpoch.
func nextShareEpoch(e int32) int32 {
	if e < 0 || e == 1<<31-1 {
		return 1
	}
	return e + 1
}

func (s *Service) sessions() *shareSessions {
	s.shareOnce.Do(func() {
		s.shareSess = &shareSessions{byKey: map[shareSessionKey]*shareSession{}, conns: map[<-chan struct{}]bool{}}
	})
	return s.shareSess
}

// ShareSessionCount is the number of live share sessions (metrics).
func (s *Service) ShareSessionCount() int {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.byKey)
}

// openShareSession starts a session at epoch 0 for the partitions of a full request. A session
// the member had is replaced and returned (its records are released by the caller).
// SHARE_SESSION_LIMIT_REACHED when group.share.max.share.sessions are open.
func (s *Service) openShareSession(ctx context.Context, key shareSessionKey, parts []coordinator.SharePartitionID) (old *shareSession, err error) {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	old = ss.byKey[key]
	delete(ss.byKey, key)
	if max := s.Cfg.Share.MaxShareSessions; max > 0 && len(ss.byKey) >= max {
		return old, kerr.ShareSessionLimitReached
	}
	sess := &shareSession{key: key, epoch: 1, update: map[coordinator.SharePartitionID]bool{}, conn: ctx.Done()}
	for _, p := range parts {
		if _, ok := sess.update[p]; !ok {
			sess.parts = append(sess.parts, p)
			sess.update[p] = true
		}
	}
	ss.byKey[key] = sess
	if c := sess.conn; c != nil && !ss.conns[c] {
		ss.conns[c] = true
		go s.watchShareConn(c)
	}
	return old, nil
}

// useShareSession checks an incremental request's epoch against its session and applies its
// partition changes (Kafka's ShareSession.update: added partitions join, forgotten ones leave);
// the session then expects the next epoch. It returns a snapshot of the session's partitions
// and of those the response must include.
func (s *Service) useShareSession(key shareSessionKey, epoch int32, add, forget []coordinator.SharePartitionID) (parts []coordinator.SharePartitionID, update map[coordinator.SharePartitionID]bool, err error) {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess := ss.byKey[key]
	if sess == nil {
		return nil, nil, kerr.ShareSessionNotFound
	}
	if epoch != sess.epoch {
		return nil, nil, kerr.InvalidShareSessionEpoch
	}
	for _, p := range add {
		if _, ok := sess.update[p]; !ok {
			sess.parts = append(sess.parts, p)
			sess.update[p] = true
		}
	}
	if len(forget) > 0 {
		gone := map[coordinator.SharePartitionID]bool{}
		for _, p := range forget {
			gone[p] = true
			delete(sess.update, p)
		}
		kept := sess.parts[:0:0]
		for _, p := range sess.parts {
			if !gone[p] {
				kept = append(kept, p)
			}
		}
		sess.parts = kept
	}
	sess.epoch = nextShareEpoch(sess.epoch)
	return sess.snapshot()
}

func (sess *shareSession) snapshot() ([]coordinator.SharePartitionID, map[coordinator.SharePartitionID]bool, error) {
	parts := append([]coordinator.SharePartitionID(nil), sess.parts...)
	update := make(map[coordinator.SharePartitionID]bool, len(sess.update))
	for p, u := range sess.update {
		update[p] = u
	}
	return parts, update, nil
}

// sessionUpdated records which partitions the response included (they are up to date) and which
// answered an error (they must be included next time).
func (s *Service) sessionUpdated(key shareSessionKey, answered map[coordinator.SharePartitionID]bool) {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess := ss.byKey[key]
	if sess == nil {
		return
	}
	for p, failed := range answered {
		if _, ok := sess.update[p]; ok {
			sess.update[p] = failed
		}
	}
}

// closeShareSession ends a session (epoch -1) and returns it; nil when there is none.
func (s *Service) closeShareSession(key shareSessionKey) *shareSession {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess := ss.byKey[key]
	delete(ss.byKey, key)
	return sess
}

// dropShareSession removes sess if it is still the member's session (a full request whose group
// turned out not to exist).
func (s *Service) dropShareSession(sess *shareSession) {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byKey[sess.key] == sess {
		delete(ss.byKey, sess.key)
	}
}

// currentShareSession returns the member's session (nil: none).
func (s *Service) currentShareSession(key shareSessionKey) *shareSession {
	ss := s.sessions()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.byKey[key]
}

// watchShareConn ends the sessions of a connection when it closes and releases what their
// members hold on their partitions.
func (s *Service) watchShareConn(conn <-chan struct{}) {
	<-conn
	ss := s.sessions()
	ss.mu.Lock()
	var ended []*shareSession
	for k, sess := range ss.byKey {
		if sess.conn == conn {
			ended = append(ended, sess)
			delete(ss.byKey, k)
		}
	}
	delete(ss.conns, conn)
	ss.mu.Unlock()
	for _, sess := range ended {
		s.releaseShareSession(sess, false)
	}
}

// releaseShareSession releases what the session's member holds on its partitions (undo: the
// deliveries are taken back, for a session its member closed).
func (s *Service) releaseShareSession(sess *shareSession, undo bool) {
	if sess == nil || len(sess.parts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := &coordinator.ShareRequest{Group: sess.key.group, Member: sess.key.member, Release: sess.parts, UndoDelivery: undo}
	if _, err := do(ctx, s, sess.key.group, coordinator.Meta{}, coordinator.Share(req)); err != nil && !errorsIsGroupGone(err) {
		s.Log.Warn("share session: releasing records failed", "group", sess.key.group, "member", sess.key.member, "err", err)
	}
}

func errorsIsGroupGone(err error) bool {
	return coordinator.ErrorCode(err) == kerr.GroupIDNotFound.Code
}
