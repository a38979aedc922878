package coordinator

import (
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The share-partition operations behind ShareFetch and ShareAcknowledge (Kafka's
// SharePartitionManager on the partition leader). The adapters keep the share sessions and read
// the partition logs; the group's shard owns the state of the group's share-partitions, so the
// acknowledgements of a request are durable before it is answered, and a member leaving or
// fenced on the shard releases what it holds there at once.

// ShareMetrics are the share-partition engine's counters (per shard, summed by the metrics
// collector).
type ShareMetrics struct {
	ShareAcquiredRecords int64 // records acquired (deliveries)
	ShareRedeliveries    int64 // deliveries of records delivered before
	ShareAccepted        int64 // acknowledgements by type
	ShareReleased        int64
	ShareRejected        int64
	ShareGaps            int64
	ShareRenewed         int64
	ShareArchivedRecords int64 // records archived after their last delivery
	ShareLockExpiries    int64 // records whose acquisition lock expired
	ShareRebalances      int64 // share group epoch bumps
}

// SharePartitionID names a partition by topic id.
type SharePartitionID struct {
	TopicID   [16]byte
	Partition int32
}

func (p SharePartitionID) key() sharePartKey {
	return sharePartKey{topic: p.TopicID, partition: p.Partition}
}

// ShareFetchPartition is a partition a fetch acquires from, with its log's offsets as the
// adapter read them.
type ShareFetchPartition struct {
	SharePartitionID
	LogStart, HighWatermark int64
	// StartOffset starts a share-partition that does not exist yet when its group resets
	// by_duration: the adapter resolves the ShareResult's NeedStart timestamp and sends it. -1
	// otherwise.
	StartOffset int64
}

// ShareAckPartition is one partition's acknowledgement batches, in offset order, checked by the
// adapter (sorted, not overlapping, known types).
type ShareAckPartition struct {
	SharePartitionID
	Batches []ShareAckBatch
}

// ShareAcquired is what a member acquired on one partition.
type ShareAcquired struct {
	SharePartitionID
	Ranges []ShareRange
}

// ShareAckResult is one partition's acknowledgement outcome (nil: applied).
type ShareAckResult struct {
	SharePartitionID
	Err error
}

// ShareStart asks the adapter for the first offset at or after Timestamp (ms): where a new
// share-partition starts under share.auto.offset.reset=by_duration.
type ShareStart struct {
	SharePartitionID
	Timestamp int64
}

// ShareRequest is one share operation of a member: acknowledgements first, then what it gives
// back (records a response could not hold, or all it holds when its share session ended), then
// acquisitions.
type ShareRequest struct {
	Group, Member string
	Acks          []ShareAckPartition
	// Unacquire gives back records acquired but never sent (the delivery is taken back).
	Unacquire []ShareAcquired
	// Release lists partitions on which everything Member holds is released after the acks;
	// UndoDelivery takes those deliveries back (a share session closed normally, KAFKA-17541).
	Release      []SharePartitionID
	UndoDelivery bool
	Fetch        []ShareFetchPartition
	// MaxRecords bounds the records acquired over all of Fetch.
	MaxRecords int
}

// ShareResult is the outcome of a ShareRequest.
type ShareResult struct {
	Acks      []ShareAckResult
	Acquired  []ShareAcquired
	NeedStart []ShareStart
	// LockDuration is the group's share.record.lock.duration.ms.
	LockDuration time.Duration
	// WakeSeq counts the group's wake-ups (ShareWatch waits for the next one).
	WakeSeq uint64
}

// Share runs a ShareRequest on the group's shard. A group id that is not a share group fails
// with GROUP_ID_NOT_FOUND.
func Share(req *ShareRequest) func(st *State, c *Call[*ShareResult]) {
	return func(st *State, c *Call[*ShareResult]) {
		g, err := st.shareGroup(req.Group)
		if err != nil {
			c.Fail(st, err)
			return
		}
		c.Reply(st, g.share(st, req))
	}
}

func (g *ShareGroup) share(st *State, req *ShareRequest) *ShareResult {
	cfg := st.shareConfig(g.id)
	lim := shareLimitsOf(cfg)
	res := &ShareResult{LockDuration: cfg.RecordLockDuration}
	dirty := map[sharePartKey]bool{}
	freed := false
	for _, ap := range req.Acks {
		r := ShareAckResult{SharePartitionID: ap.SharePartitionID}
		sp := g.parts[ap.key()]
		switch {
		case sp == nil:
			r.Err = Errf(kerr.InvalidRequest, "Batch record not found. The first offset in request is past acquired records.")
		default:
			changed, f, err := sp.acknowledge(st, g, req.Member, ap.Batches, lim)
			r.Err = err
			if changed {
				dirty[ap.key()] = true
			}
			freed = freed || f
		}
		res.Acks = append(res.Acks, r)
	}
	for _, u := range req.Unacquire {
		if sp := g.parts[u.key()]; sp != nil && sp.unacquire(st, req.Member, u.Ranges) {
			freed = true
		}
	}
	for _, p := range req.Release {
		if sp := g.parts[p.key()]; sp != nil {
			changed, f := sp.releaseMember(st, req.Member, lim, req.UndoDelivery)
			if changed {
				dirty[p.key()] = true
			}
			freed = freed || f
		}
	}
	remaining := req.MaxRecords
	for _, fp := range req.Fetch {
		k := fp.key()
		sp := g.parts[k]
		if sp == nil {
			start, ts, ok := shareInitialOffset(st, cfg, fp)
			if !ok {
				res.NeedStart = append(res.NeedStart, ShareStart{SharePartitionID: fp.SharePartitionID, Timestamp: ts})
				continue
			}
			sp = newSharePartition(fp.TopicID, fp.Partition)
			sp.start = start
			initMap(&g.parts)[k] = sp
			dirty[k] = true
		} else if sp.skipTo(st, fp.LogStart) {
			dirty[k] = true
		}
		if remaining <= 0 {
			continue
		}
		ranges := sp.acquire(st, g, req.Member, remaining, fp.HighWatermark, lim)
		if len(ranges) == 0 {
			continue
		}
		for _, r := range ranges {
			remaining -= int(r.Last - r.First + 1)
		}
		res.Acquired = append(res.Acquired, ShareAcquired{SharePartitionID: fp.SharePartitionID, Ranges: ranges})
	}
	for _, k := range g.sortedParts() {
		if dirty[k] {
			g.parts[k].write(st, g)
		}
	}
	if freed {
		g.wake(st)
	}
	res.WakeSeq = g.wakeSeq
	return res
}

// shareInitialOffset is where a new share-partition starts (share.auto.offset.reset): latest
// (the high watermark), earliest (the log start), or by_duration:<ISO-8601 duration> (the first
// record at or after now minus the duration, which the adapter resolves: ok=false asks for the
// timestamp's offset).
func shareInitialOffset(st *State, cfg ShareConfig, fp ShareFetchPartition) (start, ts int64, ok bool) {
	reset := strings.ToLower(cfg.AutoOffsetReset)
	switch {
	case reset == "earliest":
		return fp.LogStart, 0, true
	case strings.HasPrefix(reset, "by_duration:"):
		if fp.StartOffset >= 0 {
			return max(fp.StartOffset, fp.LogStart), 0, true
		}
		d, valid := parseISODuration(strings.TrimPrefix(reset, "by_duration:"))
		if !valid {
			return fp.HighWatermark, 0, true
		}
		return 0, st.Now.Add(-d).UnixMilli(), false
	}
	return fp.HighWatermark, 0, true
}

// parseISODuration parses Java's Duration.parse format PnDTnHnMn.nS (case-insensitive).
func parseISODuration(s string) (time.Duration, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(s, "P") || len(s) < 2 {
		return 0, false
	}
	s = s[1:]
	var d time.Duration
	inTime := false
	units := ""
	for len(s) > 0 {
		if s[0] == 'T' {
			if inTime {
				return 0, false
			}
			inTime = true
			s = s[1:]
			continue
		}
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 || i == len(s) {
			return 0, false
		}
		f, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, false
		}
		u := s[i]
		s = s[i+1:]
		var unit time.Duration
		switch {
		case u == 'D' && !inTime:
			unit = 24 * time.Hour
		case u == 'H' && inTime:
			unit = time.Hour
		case u == 'M' && inTime:
			unit = time.Minute
		case u == 'S' && inTime:
			unit = time.Second
		default:
			return 0, false
		}
		if strings.ContainsRune(units, rune(u)) {
			return 0, false
		}
		units += string(u)
		d += time.Duration(f * float64(unit))
	}
	return d, units != ""
}

// --- long-poll ---

// shareWatcher is a parked ShareWatch call.
type shareWatcher struct {
	c   *Call[Ack]
	key string
}

// ShareWatch waits, at most wait, for the group's next wake-up after since (records becoming
// AVAILABLE: released, their lock expired, a member left): a ShareFetch that acquired nothing
// waits on it and on its partitions' logs, then tries again. It answers at once when a wake-up
// happened since, or when the group is gone. It never acquires anything itself.
func ShareWatch(group string, since uint64, wait time.Duration) func(st *State, c *Call[Ack]) {
	return func(st *State, c *Call[Ack]) {
		g, ok := st.Groups[group].(*ShareGroup)
		if !ok || g.wakeSeq != since || wait <= 0 {
			c.Reply(st, Ack{})
			return
		}
		g.nextWID++
		id := g.nextWID
		w := &shareWatcher{c: c, key: "share-watch-" + group + "-" + strconv.FormatUint(id, 10)}
		if g.watchers == nil {
			g.watchers = map[uint64]*shareWatcher{}
		}
		g.watchers[id] = w
		st.Timers.Schedule(w.key, st.Now.Add(wait), func(st *State) {
			if sg, ok := st.Groups[group].(*ShareGroup); ok {
				delete(sg.watchers, id)
			}
			c.Reply(st, Ack{})
		})
	}
}

// wake answers every parked watcher of the group.
func (g *ShareGroup) wake(st *State) {
	g.wakeSeq++
	for id, w := range g.watchers {
		st.Timers.Cancel(w.key)
		w.c.Reply(st, Ack{})
		delete(g.watchers, id)
	}
}
