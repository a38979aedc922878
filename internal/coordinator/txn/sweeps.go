package txn

// scheduleTimeoutSweep arms the next abort of timed-out transactions (Kafka's
// "transaction-abort" task every transaction.abort.timed.out.transaction.cleanup.interval.ms).
func (st *ShardState) scheduleTimeoutSweep() {
	if st.Cfg.AbortTimedOutInterval <= 0 {
		return
	}
	st.timers.schedule("abort-timed-out", st.Now.Add(st.Cfg.AbortTimedOutInterval), func(st *ShardState) {
		AbortTimedOut(st)
		st.scheduleTimeoutSweep()
	})
}

// scheduleExpirySweep arms the next removal of expired transactional ids (every
// transaction.remove.expired.transaction.cleanup.interval.ms).
func (st *ShardState) scheduleExpirySweep() {
	if st.Cfg.RemoveExpiredIDInterval <= 0 {
		return
	}
	st.timers.schedule("remove-expired", st.Now.Add(st.Cfg.RemoveExpiredIDInterval), func(st *ShardState) {
		RemoveExpired(st)
		st.scheduleExpirySweep()
	})
}

// AbortTimedOut aborts every Ongoing transaction older than its timeout (Kafka's
// abortTimedOutTransactions): the producer is fenced (epoch + 1, last epoch -1, so it cannot
// recover through KIP-360) and the transaction moves to PrepareAbort at that epoch; the
// markers follow. It returns how many it aborted.
func AbortTimedOut(st *ShardState) int {
	n := 0
	now := st.Now.UnixMilli()
	for _, id := range st.sortedIDs() {
		m := st.Txns[id]
		if m.State != Ongoing || m.StartMs+int64(m.TimeoutMs) >= now {
			continue
		}
		f := m.clone()
		f.ProducerEpoch++
		f.LastProducerEpoch = NoProducerEpoch
		f.State, f.LastUpdateMs = PrepareAbort, now
		st.transit(f)
		st.Metrics.TimedOut++
		st.Log.Info("aborting a timed-out transaction", "transactional_id", id, "producer_id", f.ProducerID,
			"epoch", f.ProducerEpoch, "timeout_ms", m.TimeoutMs, "started_ms", m.StartMs)
		n++
	}
	return n
}

// RemoveExpired tombstones the transactional ids whose state allows expiration (Empty,
// CompleteCommit, CompleteAbort) and that were not updated for transactional.id.expiration.ms
// (Kafka's removeExpiredTransactionalIds). It returns how many it removed.
func RemoveExpired(st *ShardState) int {
	n := 0
	cutoff := st.Now.Add(-st.Cfg.IDExpiration).UnixMilli()
	for _, id := range st.sortedIDs() {
		m := st.Txns[id]
		if (m.State == Empty || m.State == CompleteCommit || m.State == CompleteAbort) && m.LastUpdateMs <= cutoff {
			st.write(coordinatorTombstone(id))
			st.Metrics.Expired++
			n++
		}
	}
	return n
}
