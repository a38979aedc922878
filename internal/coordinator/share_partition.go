package coordinator

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The share-partition engine (KIP-932; Kafka's SharePartition): for one (share group, topic,
// partition) it tracks which records are AVAILABLE, ACQUIRED by a member under a time-limited
// lock, ACKNOWLEDGED or ARCHIVED, with each record's delivery count.
//
// The share-partition start offset (SPSO) is the first offset not yet in a terminal state
// (ACKNOWLEDGED or ARCHIVED); the in-flight window holds one entry per offset from the SPSO to
// the share-partition end offset (one past the last offset ever acquired). Offsets beyond the
// window are AVAILABLE with delivery count 0. The window never grows past
// share.partition.max.record.locks offsets: a fetch then acquires only what is inside it.
//
// Durability: every change a member must be able to rely on (an acknowledgement, a release, a
// lock expiry, an archive, an initialization) writes the partition's state record (record type
// 1010, Kafka's ShareSnapshot) before the operation answers; acquisitions alone write nothing.
// As in Kafka, an ACQUIRED record is stored as AVAILABLE with the delivery count it had before
// this delivery, so after a restart it is delivered again with the same count, accepted and
// rejected records are never delivered again, and released ones keep their counts.

type shareRecState int8

// Record states (Kafka's RecordState ids, also the stored DeliveryState).
const (
	recAvailable    shareRecState = 0
	recAcquired     shareRecState = 1
	recAcknowledged shareRecState = 2
	recArchived     shareRecState = 4
)

func (s shareRecState) terminal() bool { return s == recAcknowledged || s == recArchived }

// Acknowledge types (Kafka's AcknowledgeType; RENEW is KIP-1222).
const (
	AckGap     int8 = 0
	AckAccept  int8 = 1
	AckRelease int8 = 2
	AckReject  int8 = 3
	AckRenew   int8 = 4
)

// offState is one in-flight offset: 8 bytes.
type offState struct {
	acq   uint32 // the acquisition holding it, while ACQUIRED
	count int16  // delivery count
	state shareRecState
}

// acquisition is the records one fetch gave one member, under one lock timer (Kafka's
// AcquisitionLockTimerTask per in-flight batch).
type acquisition struct {
	id          uint32
	member      string
	first, last int64 // the offsets it may hold
	live        int   // offsets still ACQUIRED under it
	key         string
}

// SharePartition is one share-partition's state.
type SharePartition struct {
	topic      [16]byte
	partition  int32
	stateEpoch int32
	start      int64
	win        []offState
	// scan is the index in win before which no entry is AVAILABLE.
	scan    int
	acqs    map[uint32]*acquisition
	nextAcq uint32
	// last is the value this partition encoded last: replaying it (State.Write) changes nothing.
	last []byte
}

func newSharePartition(topic [16]byte, partition int32) *SharePartition {
	return &SharePartition{topic: topic, partition: partition}
}

// StartOffset is the share-partition start offset.
func (sp *SharePartition) StartOffset() int64 { return sp.start }

// end is the share-partition end offset (exclusive).
func (sp *SharePartition) end() int64 { return sp.start + int64(len(sp.win)) }

// InFlight counts the window's records by state (for describe, lag and tests).
func (sp *SharePartition) InFlight() (available, acquired, terminal int) {
	for _, e := range sp.win {
		switch {
		case e.state == recAcquired:
			acquired++
		case e.state.terminal():
			terminal++
		default:
			available++
		}
	}
	return
}

// --- encoding ---

// encode is the partition's state record value (v0): state epoch int32, start offset int64,
// then the state batches [first int64, last int64, delivery state int8, delivery count int16]
// of the window, ACQUIRED stored as AVAILABLE with the previous count and AVAILABLE records never
// delivered left out.
func (sp *SharePartition) encode() []byte {
	e := Enc{B: make([]byte, 0, 20+8)}
	e.Int16(0)
	e.Int32(sp.stateEpoch)
	e.Int64(sp.start)
	nAt := len(e.B)
	e.Int32(0)
	n := int32(0)
	runStart := -1
	var rs shareRecState
	var rc int16
	flush := func(endIdx int) {
		if runStart < 0 {
			return
		}
		if !(rs == recAvailable && rc == 0) {
			e.Int64(sp.start + int64(runStart))
			e.Int64(sp.start + int64(endIdx) - 1)
			e.Int8(int8(rs))
			e.Int16(rc)
			n++
		}
		runStart = -1
	}
	for i, x := range sp.win {
		s, c := x.state, x.count
		if s == recAcquired {
			s, c = recAvailable, c-1
		}
		if runStart >= 0 && s == rs && c == rc {
			continue
		}
		flush(i)
		runStart, rs, rc = i, s, c
	}
	flush(len(sp.win))
	b := e.B
	b[nAt], b[nAt+1], b[nAt+2], b[nAt+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return b
}

// write stores the partition's state (it replays as a no-op: the state already is what it says).
func (sp *SharePartition) write(st *State, g *ShareGroup) {
	v := sp.encode()
	sp.last = v
	st.Write(Record{Key: sharePartitionKey(g.id, sp.topic, sp.partition), Value: v})
}

type stateBatch struct {
	first, last int64
	state       shareRecState
	count       int16
}

func decodeSharePartition(v []byte) (epoch int32, start int64, batches []stateBatch, err error) {
	d := Dec{B: v}
	if _, err := checkVersion(&d, 0, "SharePartitionState"); err != nil {
		return 0, 0, nil, err
	}
	epoch, start = d.Int32(), d.Int64()
	n := d.ArrayLen(19)
	for i := 0; i < n && d.Err() == nil; i++ {
		b := stateBatch{first: d.Int64(), last: d.Int64(), state: shareRecState(d.Int8()), count: d.Int16()}
		switch b.state {
		case recAvailable, recAcknowledged, recArchived:
		default:
			return 0, 0, nil, ErrCorruptRecord
		}
		if b.last < b.first || b.first < start || (len(batches) > 0 && b.first <= batches[len(batches)-1].last) || b.count < 0 {
			return 0, 0, nil, ErrCorruptRecord
		}
		batches = append(batches, b)
	}
	return epoch, start, batches, d.Done()
}

// maxWindow bounds a decoded window (a corrupt record must not make the broker allocate
// without limit): ten times the largest share.partition.max.record.locks.
const maxWindow = 100_000

// replay applies a state record. The live operations change the partition first and then write
// the record describing it, whose replay is recognised and skipped. Any other value (a load, or
// a state set by an admin operation) replaces the durable state; records a member holds that
// the value leaves as they are stored stay ACQUIRED by it.
func (sp *SharePartition) replay(st *State, g *ShareGroup, v []byte) error {
	if sp.last != nil && len(v) == len(sp.last) && len(v) > 0 && &v[0] == &sp.last[0] {
		return nil
	}
	epoch, start, batches, err := decodeSharePartition(v)
	if err != nil {
		return err
	}
	end := start
	if len(batches) > 0 {
		end = batches[len(batches)-1].last + 1
	}
	if end-start > maxWindow {
		return ErrCorruptRecord
	}
	old, oldStart := sp.win, sp.start
	win := make([]offState, end-start)
	for _, b := range batches {
		for o := b.first; o <= b.last; o++ {
			win[o-start] = offState{state: b.state, count: b.count}
		}
	}
	// Keep what members hold where the stored state agrees with it.
	for i, x := range old {
		if x.state != recAcquired {
			continue
		}
		o := oldStart + int64(i)
		if o < start {
			continue
		}
		j := o - start
		if j >= int64(len(win)) {
			if x.count != 1 {
				continue
			}
			for int64(len(win)) <= j {
				win = append(win, offState{})
			}
		}
		if w := win[j]; w.state == recAvailable && w.count == x.count-1 {
			win[j] = x
		}
	}
	sp.stateEpoch, sp.start, sp.win, sp.scan, sp.last = epoch, start, win, 0, nil
	sp.recount(st)
	return nil
}

// recount recomputes the acquisitions' live counts after the window was replaced, dropping
// (and disarming) those that hold nothing any more.
func (sp *SharePartition) recount(st *State) {
	for _, a := range sp.acqs {
		a.live = 0
	}
	for _, x := range sp.win {
		if x.state == recAcquired {
			if a := sp.acqs[x.acq]; a != nil {
				a.live++
			}
		}
	}
	for id, a := range sp.acqs {
		if a.live == 0 {
			st.Timers.Cancel(a.key)
			delete(sp.acqs, id)
		}
	}
}

// drop disarms every lock timer (the partition's state is deleted).
func (sp *SharePartition) drop(st *State, _ *ShareGroup) {
	for _, a := range sp.acqs {
		st.Timers.Cancel(a.key)
	}
	sp.acqs = nil
	sp.win = nil
}

// --- window maintenance ---

// advance moves the SPSO over the terminal prefix of the window.
func (sp *SharePartition) advance() {
	k := 0
	for k < len(sp.win) && sp.win[k].state.terminal() {
		k++
	}
	if k == 0 {
		return
	}
	sp.start += int64(k)
	sp.win = sp.win[k:]
	sp.scan = max(0, sp.scan-k)
	if cap(sp.win) > 64 && cap(sp.win) > 4*len(sp.win) {
		sp.win = append(make([]offState, 0, 2*len(sp.win)+16), sp.win...)
	}
}

// skipTo moves the SPSO to logStart when the log no longer holds the records before it
// (retention, DeleteRecords): they are gone, whatever their state. It reports a change.
func (sp *SharePartition) skipTo(st *State, logStart int64) bool {
	if sp.start >= logStart {
		return false
	}
	k := logStart - sp.start
	if k >= int64(len(sp.win)) {
		for _, x := range sp.win {
			sp.releaseSlot(st, x)
		}
		sp.win = sp.win[:0]
	} else {
		for _, x := range sp.win[:k] {
			sp.releaseSlot(st, x)
		}
		sp.win = append([]offState(nil), sp.win[k:]...)
	}
	sp.start, sp.scan = logStart, 0
	sp.advance()
	return true
}

// releaseSlot forgets that an entry leaving the window was held.
func (sp *SharePartition) releaseSlot(st *State, x offState) {
	if x.state != recAcquired {
		return
	}
	sp.dropHold(st, sp.acqs[x.acq])
}

// dropHold counts one record less held by a (nil: none); an acquisition holding nothing is
// disarmed and forgotten.
func (sp *SharePartition) dropHold(st *State, a *acquisition) {
	if a == nil {
		return
	}
	a.live--
	if a.live <= 0 {
		st.Timers.Cancel(a.key)
		delete(sp.acqs, a.id)
	}
}

// unhold detaches an ACQUIRED entry from its acquisition.
func (sp *SharePartition) unhold(st *State, e *offState) {
	sp.releaseSlot(st, *e)
	e.acq = 0
}

// holds caches the acquisition of the last entry looked at: runs of records share one, so a
// loop over them looks each acquisition up once.
type holds struct {
	sp *SharePartition
	id uint32
	a  *acquisition
}

func (h *holds) of(id uint32) *acquisition {
	if id != h.id || h.a == nil {
		h.id, h.a = id, h.sp.acqs[id]
	}
	return h.a
}

// unhold is SharePartition.unhold with the cached lookup.
func (h *holds) unhold(st *State, e *offState) {
	if e.state == recAcquired {
		a := h.of(e.acq)
		h.sp.dropHold(st, a)
		if a != nil && a.live <= 0 {
			h.a = nil
		}
	}
	e.acq = 0
}

// --- acquisition ---

// ShareRange is a run of acquired offsets with one delivery count.
type ShareRange struct {
	First, Last   int64
	DeliveryCount int16
}

// shareLimits are the group's share configuration as one operation applies it.
type shareLimits struct {
	lock       time.Duration
	deliveries int16
	maxLocks   int
}

func shareLimitsOf(c ShareConfig) shareLimits {
	return shareLimits{lock: c.RecordLockDuration, deliveries: int16(c.DeliveryCountLimit), maxLocks: c.PartitionMaxRecordLocks}
}

// acquire gives member up to maxRecords AVAILABLE records below hw (Kafka's SharePartition
// .acquire): released records in the window first, then new offsets past the end of the window
// while it holds fewer than maxLocks offsets. A record about to get its last delivery is
// delivered alone (KAFKA-17541, Kafka 4.2), so a poison record does not take others down with
// it. The acquired records are locked for lim.lock. It returns the acquired ranges.
func (sp *SharePartition) acquire(st *State, g *ShareGroup, member string, maxRecords int, hw int64, lim shareLimits) []ShareRange {
	if maxRecords <= 0 {
		return nil
	}
	var (
		out []ShareRange
		n   int
		a   *acquisition
	)
	take := func(i int) {
		e := &sp.win[i]
		if a == nil {
			sp.nextAcq++
			if sp.nextAcq == 0 {
				sp.nextAcq = 1
			}
			a = &acquisition{id: sp.nextAcq, member: member, first: sp.start + int64(i)}
			initMap(&sp.acqs)[a.id] = a
		}
		e.state, e.acq = recAcquired, a.id
		e.count++
		a.live++
		off := sp.start + int64(i)
		a.last = off
		n++
		st.Metrics.ShareAcquiredRecords++
		if e.count > 1 {
			st.Metrics.ShareRedeliveries++
		}
		if k := len(out); k > 0 && out[k-1].Last == off-1 && out[k-1].DeliveryCount == e.count {
			out[k-1].Last = off
		} else {
			out = append(out, ShareRange{First: off, Last: off, DeliveryCount: e.count})
		}
	}
	lastAttempt := func(count int16) bool { return lim.deliveries > 2 && count == lim.deliveries-1 }
	stop := false
	first := true
	for i := sp.scan; i < len(sp.win) && n < maxRecords; i++ {
		e := sp.win[i]
		if e.state != recAvailable {
			if first {
				sp.scan = i + 1
			}
			continue
		}
		first = false
		if sp.start+int64(i) >= hw {
			stop = true
			break
		}
		if lastAttempt(e.count) {
			if n > 0 {
				stop = true
				break
			}
			take(i)
			stop = true
			break
		}
		take(i)
	}
	if !stop {
		limit := sp.start + int64(lim.maxLocks)
		for off := sp.end(); off < hw && off < limit && n < maxRecords; off++ {
			sp.win = append(sp.win, offState{})
			take(len(sp.win) - 1)
		}
	}
	if a != nil {
		sp.lock(st, g, a, lim.lock)
	}
	return out
}

// lockKey names an acquisition's lock timer.
func (sp *SharePartition) lockKey(g *ShareGroup, id uint32) string {
	return "share-lock-" + g.id + "-" + hex.EncodeToString(sp.topic[:]) + "-" + strconv.Itoa(int(sp.partition)) + "-" + strconv.FormatUint(uint64(id), 10)
}

// lock arms an acquisition's lock timer: when it fires, what the acquisition still holds is
// released (Kafka's AcquisitionLockTimerTask), or archived on its last delivery.
func (sp *SharePartition) lock(st *State, g *ShareGroup, a *acquisition, d time.Duration) {
	a.key = sp.lockKey(g, a.id)
	gid, topic, partition, id := g.id, sp.topic, sp.partition, a.id
	st.Timers.Schedule(a.key, st.Now.Add(d), func(st *State) {
		sg, ok := st.Groups[gid].(*ShareGroup)
		if !ok {
			return
		}
		p := sg.parts[sharePartKey{topic, partition}]
		if p == nil {
			return
		}
		p.expire(st, sg, id)
	})
}

// expire releases what acquisition id still holds when its lock expires.
func (sp *SharePartition) expire(st *State, g *ShareGroup, id uint32) {
	a := sp.acqs[id]
	if a == nil {
		return
	}
	lim := shareLimitsOf(st.shareConfig(g.id))
	changed, freed := false, false
	for o := max(a.first, sp.start); o <= a.last && o < sp.end(); o++ {
		e := &sp.win[o-sp.start]
		if e.state != recAcquired || e.acq != id {
			continue
		}
		st.Metrics.ShareLockExpiries++
		if sp.releaseEntry(st, int(o-sp.start), lim, false) {
			freed = true
		}
		changed = true
	}
	delete(sp.acqs, id)
	if changed {
		sp.advance()
		sp.write(st, g)
	}
	if freed {
		g.wake(st)
	}
}

// releaseFree is releaseEntry for an entry whose hold was already dropped.
func (sp *SharePartition) releaseFree(st *State, i int, lim shareLimits) bool {
	e := &sp.win[i]
	if e.count >= lim.deliveries {
		e.state = recArchived
		st.Metrics.ShareArchivedRecords++
		return false
	}
	e.state = recAvailable
	if i < sp.scan {
		sp.scan = i
	}
	return true
}

// releaseEntry makes an ACQUIRED entry AVAILABLE again, or ARCHIVED when it had its last
// delivery (Kafka's InFlightState.tryUpdateState); undo takes back the delivery (the records of
// a share session closed normally were fetched but not delivered, KAFKA-17541). It reports
// whether the record became AVAILABLE.
func (sp *SharePartition) releaseEntry(st *State, i int, lim shareLimits, undo bool) bool {
	e := &sp.win[i]
	sp.unhold(st, e)
	if undo && e.count > 0 {
		e.count--
	}
	if !undo && e.count >= lim.deliveries {
		e.state = recArchived
		st.Metrics.ShareArchivedRecords++
		return false
	}
	e.state = recAvailable
	if i < sp.scan {
		sp.scan = i
	}
	return true
}

// releaseMember releases every record member holds (it left, was fenced, or its share session
// ended). undo takes back the deliveries. It reports whether the durable state changed and
// whether records became AVAILABLE.
func (sp *SharePartition) releaseMember(st *State, member string, lim shareLimits, undo bool) (changed, freed bool) {
	for id, a := range sp.acqs {
		if a.member != member {
			continue
		}
		for o := max(a.first, sp.start); o <= a.last && o < sp.end(); o++ {
			e := &sp.win[o-sp.start]
			if e.state != recAcquired || e.acq != id {
				continue
			}
			if sp.releaseEntry(st, int(o-sp.start), lim, undo) {
				freed = true
			}
			if !undo {
				changed = true
			}
		}
		st.Timers.Cancel(a.key)
		delete(sp.acqs, id)
	}
	if changed || freed {
		sp.advance()
	}
	return changed, freed
}

// unacquire gives back records member acquired but that were never sent (a fetch response
// could not hold them): the delivery is taken back, which changes nothing durable.
func (sp *SharePartition) unacquire(st *State, member string, ranges []ShareRange) (freed bool) {
	for _, r := range ranges {
		for o := max(r.First, sp.start); o <= r.Last && o < sp.end(); o++ {
			e := &sp.win[o-sp.start]
			if e.state != recAcquired {
				continue
			}
			if a := sp.acqs[e.acq]; a == nil || a.member != member {
				continue
			}
			sp.releaseEntry(st, int(o-sp.start), shareLimits{}, true)
			freed = true
		}
	}
	return freed
}

// --- acknowledgement ---

// ShareAckBatch is one acknowledgement batch: Types has one type for the whole range or one per
// offset (checked by the adapter, with the batches' order).
type ShareAckBatch struct {
	First, Last int64
	Types       []int8
}

func (b *ShareAckBatch) typeAt(o int64) int8 {
	if len(b.Types) == 1 {
		return b.Types[0]
	}
	return b.Types[o-b.First]
}

// acknowledge applies member's acknowledgement batches to the partition (Kafka's
// SharePartition.acknowledge), all or nothing: an offset past the records ever acquired is
// INVALID_REQUEST; an offset not ACQUIRED by member (never acquired, acknowledged already, or
// its lock expired and it went to someone else) is INVALID_RECORD_STATE. Offsets below the
// SPSO are skipped. ACCEPT makes records ACKNOWLEDGED, RELEASE makes them AVAILABLE again (or
// ARCHIVED after their last delivery), REJECT and GAP make them ARCHIVED, RENEW restarts their
// lock. It reports whether the durable state changed and whether records became AVAILABLE.
func (sp *SharePartition) acknowledge(st *State, g *ShareGroup, member string, batches []ShareAckBatch, lim shareLimits) (changed, freed bool, err error) {
	end := sp.end()
	h := holds{sp: sp}
	for i := range batches {
		b := &batches[i]
		if b.Last < sp.start {
			continue
		}
		if b.First >= end {
			return false, false, Errf(kerr.InvalidRequest, "Batch record not found. The first offset in request is past acquired records.")
		}
		if b.Last >= end {
			return false, false, Errf(kerr.InvalidRequest, "Batch record not found. The last offset in request is past acquired records.")
		}
		for o := max(b.First, sp.start); o <= b.Last; o++ {
			e := sp.win[o-sp.start]
			if e.state != recAcquired {
				return false, false, Errf(kerr.InvalidRecordState, "The batch cannot be acknowledged. The batch is not in the acquired state.")
			}
			if a := h.of(e.acq); a == nil || a.member != member {
				return false, false, Errf(kerr.InvalidRecordState, "Member is not the owner of batch record")
			}
		}
	}
	var renew *acquisition
	for i := range batches {
		b := &batches[i]
		for o := max(b.First, sp.start); o <= b.Last; o++ {
			idx := int(o - sp.start)
			e := &sp.win[idx]
			switch b.typeAt(o) {
			case AckAccept:
				h.unhold(st, e)
				e.state = recAcknowledged
				st.Metrics.ShareAccepted++
				changed = true
			case AckRelease:
				st.Metrics.ShareReleased++
				h.unhold(st, e)
				if sp.releaseFree(st, idx, lim) {
					freed = true
				}
				changed = true
			case AckReject:
				h.unhold(st, e)
				e.state = recArchived
				st.Metrics.ShareRejected++
				changed = true
			case AckGap:
				h.unhold(st, e)
				e.state = recArchived
				st.Metrics.ShareGaps++
				changed = true
			case AckRenew:
				h.unhold(st, e)
				if renew == nil {
					sp.nextAcq++
					if sp.nextAcq == 0 {
						sp.nextAcq = 1
					}
					renew = &acquisition{id: sp.nextAcq, member: member, first: o}
					initMap(&sp.acqs)[renew.id] = renew
				}
				e.state, e.acq = recAcquired, renew.id
				renew.live++
				renew.last = o
				st.Metrics.ShareRenewed++
			}
		}
	}
	if renew != nil {
		sp.lock(st, g, renew, lim.lock)
	}
	if changed {
		sp.advance()
	}
	return changed, freed, nil
}

// ShareRun is a run of offsets of a share-partition's window in one state (tests and tools).
type ShareRun struct {
	First, Last int64
	State       string // "available", "acquired", "acknowledged", "archived"
	Count       int16
	Member      string // the holder of acquired records
}

// SharePartitionView describes a share-partition: its SPSO and its window as runs.
func SharePartitionView(st *State, group string, topic [16]byte, partition int32) (start int64, runs []ShareRun, ok bool) {
	g, isShare := st.Groups[group].(*ShareGroup)
	if !isShare {
		return 0, nil, false
	}
	sp := g.parts[sharePartKey{topic, partition}]
	if sp == nil {
		return 0, nil, false
	}
	name := func(s shareRecState) string {
		switch s {
		case recAcquired:
			return "acquired"
		case recAcknowledged:
			return "acknowledged"
		case recArchived:
			return "archived"
		}
		return "available"
	}
	for i, x := range sp.win {
		o := sp.start + int64(i)
		member := ""
		if x.state == recAcquired {
			if a := sp.acqs[x.acq]; a != nil {
				member = a.member
			}
		}
		if k := len(runs); k > 0 && runs[k-1].Last == o-1 && runs[k-1].State == name(x.state) && runs[k-1].Count == x.count && runs[k-1].Member == member {
			runs[k-1].Last = o
			continue
		}
		runs = append(runs, ShareRun{First: o, Last: o, State: name(x.state), Count: x.count, Member: member})
	}
	return sp.start, runs, true
}
