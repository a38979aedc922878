package api

import (
	"errors"

	"github.com/muster-io/muster/internal/coordinator/engine"
)

// While the store refuses writes (a disk short of space or a failed store, Service.Writes), the
// adapters keep the shards from reloading over and over:
//
//   - Requests that always write are refused before they reach a shard, with
//     COORDINATOR_NOT_AVAILABLE (retriable) and the reason: OffsetCommit, JoinGroup, LeaveGroup,
//     a ConsumerGroupHeartbeat or StreamsGroupHeartbeat that joins or leaves (member epoch 0,
//     -1 or -2) and StreamsGroupTopologyDescriptionUpdate.
//   - The rest (heartbeats, SyncGroup, deletes, reads) reach the shard, which serves them as
//     long as they write nothing or only tombstones. One that writes anything else (a heartbeat
//     that would bump an epoch, a leader's SyncGroup) is refused by the engine, which reloads
//     the shard; the group is then frozen: its requests that may write are refused here without
//     reaching the shard until the store takes writes again. A group whose next step needs a
//     write would otherwise retry that step, and reload its shard, on every heartbeat.
//
// Reads (OffsetFetch, Describe*, ListGroups, FindCoordinator) are never refused.

// refuseWrite returns the error of a request that always writes while the store refuses writes
// (counted as a refused group write), else nil.
func (s *Service) refuseWrite() error {
	if s.Writes == nil || !s.Writes.Refusing() {
		return nil
	}
	if err := s.Writes.Refuse(false); err != nil {
		return engine.Refused(err)
	}
	return nil
}

// refuseFrozen returns the error of a request that may write, of a group frozen because a shard
// refused one of its writes since the store stopped taking writes; nil otherwise. It thaws every
// group once the store takes writes again.
func (s *Service) refuseFrozen(group string) error {
	if s.Writes == nil {
		return nil
	}
	if !s.Writes.Refusing() {
		if s.frozenN.Load() > 0 {
			s.frozenMu.Lock()
			clear(s.frozen)
			s.frozenN.Store(0)
			s.frozenMu.Unlock()
		}
		return nil
	}
	s.frozenMu.Lock()
	_, ok := s.frozen[group]
	s.frozenMu.Unlock()
	if !ok {
		return nil
	}
	return s.refuseWrite()
}

// noteRefused freezes group when err is a shard's refusal of one of its writes.
func (s *Service) noteRefused(group string, err error) {
	if err == nil || !errors.Is(err, engine.ErrWritesRefused) {
		return
	}
	s.frozenMu.Lock()
	if s.frozen == nil {
		s.frozen = map[string]struct{}{}
	}
	s.frozen[group] = struct{}{}
	s.frozenN.Store(int32(len(s.frozen)))
	s.frozenMu.Unlock()
}
