package data

import (
	"errors"
	"math"
	"sort"
	"sync"
	"time"
)

// cleaner runs log compaction in the background (Kafka's LogCleaner): every round it picks the
// partitions of compacted topics whose dirty ratio exceeds min.cleanable.dirty.ratio (or that
// max.compaction.lag.ms forces), filthiest first, up to log.cleaner.threads at once, and sleeps
// log.cleaner.backoff.ms when none needs cleaning. The settings are read every round, so a
// dynamic change applies at once.
type cleaner struct {
	p    *Plane
	wake chan struct{} // a config change: re-read the settings now
	done chan struct{}

	mu          sync.Mutex
	inProgress  map[*partition]bool
	uncleanable map[*partition]bool // cleaning failed (a corrupt batch): skipped until restart
}

func newCleaner(p *Plane) *cleaner {
	return &cleaner{p: p, wake: make(chan struct{}, 1), done: make(chan struct{}),
		inProgress: map[*partition]bool{}, uncleanable: map[*partition]bool{}}
}

// poke makes the loop re-read its settings.
func (c *cleaner) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *cleaner) run() {
	defer close(c.done)
	cleaned := 0
	for {
		eff := c.p.effective()
		if cleaned == 0 { // Kafka's CleanerThread: back off when the last round found nothing
			t := time.NewTimer(eff.Ms("log.cleaner.backoff.ms"))
			select {
			case <-c.p.closing:
				t.Stop()
				return
			case <-c.wake:
				t.Stop()
			case <-t.C:
			}
			eff = c.p.effective()
		}
		select {
		case <-c.p.closing:
			return
		default:
		}
		cleaned = 0
		if threads := int(eff.Int("log.cleaner.threads")); eff.Bool("log.cleaner.enable") && threads > 0 && !c.p.storeFailed() {
			cleaned = c.round(threads, false)
		}
	}
}

// round cleans up to n of the filthiest cleanable partitions concurrently (all of them when
// all) and returns how many it cleaned.
func (c *cleaner) round(n int, all bool) int {
	jobs, nowMs := c.grab(n, all)
	if len(jobs) == 0 {
		return 0
	}
	eff := c.p.effective()
	mapLimit := int(float64(eff.Int("log.cleaner.dedupe.buffer.size")) / float64(max(n, 1)) / 24 * eff.Float("log.cleaner.io.buffer.load.factor"))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(n, 1))
	cleaned := 0
	var mu sync.Mutex
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j *cleanJob) {
			defer wg.Done()
			defer func() { <-sem }()
			if c.clean(j, nowMs, mapLimit) {
				mu.Lock()
				cleaned++
				mu.Unlock()
			}
		}(j)
	}
	wg.Wait()
	return cleaned
}

// clean runs one job and releases its partition.
func (c *cleaner) clean(j *cleanJob, nowMs int64, mapLimit int) bool {
	start := time.Now()
	st, err := c.p.cleanPartition(j, nowMs, mapLimit)
	c.mu.Lock()
	delete(c.inProgress, j.part)
	if err != nil && !errors.Is(err, errCleaningAborted) {
		c.uncleanable[j.part] = true
	}
	c.mu.Unlock()
	log := c.p.log.With("topic", j.t.name, "partition", j.part.index)
	switch {
	case errors.Is(err, errCleaningAborted):
		log.Info("log cleaning aborted; retrying next round", "reason", err)
		return false
	case err != nil:
		log.Warn("log cleaning failed; partition marked uncleanable until restart", "err", err)
		return false
	}
	log.Info("log cleaned", "dirty_from", j.firstDirty, "dirty_to", j.firstUncleanable,
		"bytes_read", st.bytesRead, "bytes_written", st.bytesWritten,
		"records_read", st.recordsRead, "records_written", st.recordsWritten,
		"batches_removed", st.batchesRemoved, "elapsed", time.Since(start).Round(time.Millisecond))
	return true
}

// grab chooses the partitions to clean now and marks them in progress (Kafka's
// LogCleanerManager.grabFilthiestCompactedLog): logs of compacted topics with bytes, whose
// cleanable ratio exceeds min.cleanable.dirty.ratio or that max.compaction.lag.ms forces,
// filthiest first.
func (c *cleaner) grab(n int, all bool) ([]*cleanJob, int64) {
	var jobs []*cleanJob
	nowMs := int64(-1)
	for _, t := range c.p.sortedTopics() {
		lc := t.logConfig()
		if !lc.compact {
			continue
		}
		if nowMs < 0 {
			nowMs = c.p.cfg.Now().UnixMilli()
		}
		c.p.mu.RLock()
		parts := t.parts
		c.p.mu.RUnlock()
		for _, part := range parts {
			c.mu.Lock()
			skip := c.inProgress[part] || c.uncleanable[part]
			c.mu.Unlock()
			if skip {
				continue
			}
			floor := int64(math.MaxInt64)
			if t.name == GroupMetadataTopic {
				if f := c.p.groupMetadataFloor.Load(); f != nil {
					floor = (*f)(part.index)
				}
			}
			j := planClean(t, part, lc, nowMs, floor)
			if j.cleanBytes+j.cleanableBytes == 0 {
				continue
			}
			if (j.needNow && j.cleanableBytes > 0) || j.ratio > lc.minCleanableRatio {
				jobs = append(jobs, j)
			}
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].ratio > jobs[b].ratio })
	if !all && len(jobs) > n {
		jobs = jobs[:n]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := jobs[:0]
	for _, j := range jobs {
		if !c.inProgress[j.part] {
			c.inProgress[j.part] = true
			out = append(out, j)
		}
	}
	return out, nowMs
}

// planClean computes a partition's cleanable range and dirty ratio (Kafka's
// LogCleanerManager.cleanableOffsets and calculateCleanableBytes): the dirty section starts at
// the checkpoint (the log start when the checkpoint is missing or out of range) and ends at the
// base of the segment holding the first offset that may not be cleaned — the active segment's
// base, the high watermark, or the first dirty segment whose newest record is younger than
// min.compaction.lag.ms — and never at or above floor (SetGroupMetadataCleanFloor).
func planClean(t *topic, part *partition, lc *logConfig, nowMs, floor int64) *cleanJob {
	part.mu.Lock()
	if !part.led {
		part.mu.Unlock()
		return &cleanJob{t: t, part: part, lc: lc} // nothing to clean here: another node leads it
	}
	j := &cleanJob{t: t, part: part, lc: lc, logStart: part.logStart, epoch: part.epoch,
		segs: append([]segment(nil), part.segs...), producers: map[int64]int64{}}
	// Cleaning stops at the last stable offset (Kafka's firstUncleanableDirtyOffset counts
	// the first unstable offset): an open transaction may still be aborted.
	firstDirty, hw := part.firstDirty, part.lsoLocked()
	j.aborted = append([]abortedTxn(nil), part.aborted...)
	for pid, ps := range part.producers {
		if n := len(ps.batches); n > 0 {
			b := ps.batches[n-1]
			j.producers[pid] = b.base + int64(b.lastDelta)
		}
	}
	part.mu.Unlock()

	if firstDirty < j.logStart || firstDirty > hw {
		firstDirty = j.logStart
	}
	segs := j.segs
	active := segs[len(segs)-1].base
	uncleanable := min(hw, active, max(floor, j.logStart))
	if lc.minCompactionLagMs > 0 {
		for i := segmentContaining(segs, firstDirty); i < len(segs)-1; i++ {
			if segs[i].largestTs > nowMs-lc.minCompactionLagMs {
				uncleanable = min(uncleanable, segs[i].base)
				break
			}
		}
	}
	firstUncleanable := segs[segmentContaining(segs, uncleanable)].base
	j.firstDirty, j.firstUncleanable = firstDirty, max(firstDirty, firstUncleanable)
	for i, s := range segs {
		end := int64(-1)
		if i+1 < len(segs) {
			end = segs[i+1].base
		}
		if s.base < firstDirty {
			j.cleanBytes += s.bytes
		}
		if end > min(firstDirty, j.firstUncleanable) && s.base < j.firstUncleanable {
			j.cleanableBytes += s.bytes
		}
	}
	if total := j.cleanBytes + j.cleanableBytes; total > 0 {
		j.ratio = float64(j.cleanableBytes) / float64(total)
	}
	// max.compaction.lag.ms: a dirty sealed segment whose first batch is older forces cleaning.
	if lc.maxCompactionLagMs > 0 && lc.maxCompactionLagMs < nowMs {
		cleanUntil := nowMs - lc.maxCompactionLagMs
		for i := segmentContaining(segs, firstDirty); i < len(segs)-1; i++ {
			if ts := segs[i].rollTs; ts > 0 && ts < cleanUntil {
				j.needNow = true
				break
			}
		}
	}
	return j
}

// CleanLogs compacts, now (Config.Now), every partition of a compacted topic that needs it, as
// the background cleaner would in its next rounds, and returns how many it cleaned.
func (p *Plane) CleanLogs() int {
	return p.cleaner.round(1, true)
}
