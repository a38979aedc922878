package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Share group (KIP-932) workloads: consumers of one share group on a 1-partition topic
// pre-filled with Options.ShareRecords records, every record accepted.
//
//   - share: raw share members, each on its own connection, loop ShareFetch (up to
//     Options.ShareBatch records) then ShareAcknowledge (ACCEPT) of what they got. Units are
//     records acknowledged; latencies are the ShareAcknowledge round trips (on muster the
//     acknowledgement is fsynced before the answer; kfake keeps it in memory).
//   - share-kgo: franz-go share consumers (kgo.ShareGroup), acknowledgements piggybacked on their
//     next fetch as kgo does; units are records delivered and accepted, over the time until every
//     record was delivered.
//   - share-memory: one member acquires ShareMemoryRecords records (over as many partitions as
//     share.partition.max.record.locks requires) and holds them: the broker's memory growth per
//     in-flight record.

// ShareOverrides are the muster settings the share workloads need: the largest in-flight window
// (the memory step holds 10000 records per partition).
func ShareOverrides() []string {
	return []string{"group.share.partition.max.record.locks=10000", "group.share.max.partition.max.record.locks=10000"}
}

const shareValueBytes = 100

// shareSetup creates a 1-partition topic with n records and sets the group to start at the
// beginning of the log. It returns the topic id.
func shareSetup(ctx context.Context, t Target, topic, group string, partitions int32, n int) ([16]byte, error) {
	var id [16]byte
	if err := createTopic(ctx, t.Addr, topic, partitions); err != nil {
		return id, err
	}
	c, err := dial(t.Addr, ClientRaw)
	if err != nil {
		return id, err
	}
	defer c.close()
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	v := "earliest"
	cfg.Name, cfg.Value = "share.auto.offset.reset", &v
	res.Configs = append(res.Configs, cfg)
	alter.Resources = append(alter.Resources, res)
	r, err := c.do(ctx, alter)
	if err != nil {
		return id, err
	}
	if err := kerr.ErrorForCode(r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode); err != nil {
		return id, fmt.Errorf("set share.auto.offset.reset: %w", err)
	}
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	md.Topics = append(md.Topics, mt)
	mr, err := c.do(ctx, md)
	if err != nil {
		return id, err
	}
	for _, tm := range mr.(*kmsg.MetadataResponse).Topics {
		id = tm.TopicID
	}
	p, err := dialKgo(t.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond), kgo.RecordRetries(3),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return id, err
	}
	defer p.close()
	val := make([]byte, shareValueBytes)
	var failed atomic.Int64
	for i := 0; i < n; i++ {
		p.cl.Produce(ctx, &kgo.Record{Value: val, Partition: int32(i) % partitions}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
		})
	}
	if err := p.cl.Flush(ctx); err != nil {
		return id, err
	}
	if failed.Load() > 0 {
		return id, fmt.Errorf("%d of %d records not produced", failed.Load(), n)
	}
	return id, nil
}

// shareMember is one raw share member on its own connection.
type shareMember struct {
	c            *conn
	group, id    string
	sess         int32
	topic        [16]byte
	partitions   []int32
	maxRecords   int32
	acquired     []kmsg.ShareFetchResponseTopicPartition
	lastAckError error
}

func (m *shareMember) join(ctx context.Context, topicName string) error {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = m.group, m.id, []string{topicName}
	r, err := m.c.do(ctx, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(r.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode)
}

// fetch acquires records; it returns how many.
func (m *shareMember) fetch(ctx context.Context, wait int32) (int, error) {
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = &m.group, &m.id
	req.ShareSessionEpoch = m.sess
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = wait, 1, 50<<20
	req.MaxRecords, req.BatchSize = m.maxRecords, m.maxRecords
	if m.sess == 0 {
		t := kmsg.NewShareFetchRequestTopic()
		t.TopicID = m.topic
		for _, p := range m.partitions {
			rp := kmsg.NewShareFetchRequestTopicPartition()
			rp.Partition = p
			t.Partitions = append(t.Partitions, rp)
		}
		req.Topics = append(req.Topics, t)
	}
	r, err := m.c.do(ctx, req)
	if err != nil {
		return 0, err
	}
	resp := r.(*kmsg.ShareFetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, err
	}
	m.sess++
	m.acquired = m.acquired[:0]
	n := 0
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, err
			}
			if len(p.AcquiredRecords) > 0 {
				m.acquired = append(m.acquired, p)
				for _, a := range p.AcquiredRecords {
					n += int(a.LastOffset - a.FirstOffset + 1)
				}
			}
		}
	}
	return n, nil
}

// ack accepts what the last fetch acquired.
func (m *shareMember) ack(ctx context.Context) error {
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID = &m.group, &m.id
	req.ShareSessionEpoch = m.sess
	t := kmsg.NewShareAcknowledgeRequestTopic()
	t.TopicID = m.topic
	for _, p := range m.acquired {
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.Partition = p.Partition
		for _, a := range p.AcquiredRecords {
			b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
			b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.FirstOffset, a.LastOffset, []int8{1}
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
		}
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	r, err := m.c.do(ctx, req)
	if err != nil {
		return err
	}
	resp := r.(*kmsg.ShareAcknowledgeResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	m.sess++
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return err
			}
		}
	}
	return nil
}

// shareRaw runs consumers raw share members until every record is acknowledged or the duration
// is over.
func shareRaw(ctx context.Context, o *Options, t Target, run string, consumers int) Result {
	res := Result{Workload: WShare, Target: t.Name, Conns: consumers, Members: consumers, Partitions: 1, UnitName: "records acknowledged"}
	topic := "bench-share-" + run + "-" + strconv.Itoa(consumers)
	group := topic + "-g"
	id, err := shareSetup(ctx, t, topic, group, 1, o.ShareRecords)
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	cs, err := dialAll(t.Addr, ClientRaw, consumers)
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	defer closeAll(cs)
	ms := make([]*shareMember, consumers)
	for i := range ms {
		ms[i] = &shareMember{c: cs[i], group: group, id: fmt.Sprintf("bench-member-%04d", i), topic: id, partitions: []int32{0}, maxRecords: int32(o.ShareBatch)}
		if err := ms[i].join(ctx, topic); err != nil {
			res.Skipped, res.Note = true, "join: "+err.Error()
			return res
		}
	}
	var (
		acked    atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		fails    int64
		firstErr error
		wg       sync.WaitGroup
	)
	rctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	start := time.Now()
	for _, m := range ms {
		wg.Add(1)
		go func(m *shareMember) {
			defer wg.Done()
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
			for rctx.Err() == nil && acked.Load() < int64(o.ShareRecords) {
				n, err := m.fetch(rctx, 100)
				if err == nil && n > 0 {
					t0 := time.Now()
					if err = m.ack(rctx); err == nil {
						mine = append(mine, time.Since(t0))
						acked.Add(int64(n))
					}
				}
				if err != nil && rctx.Err() == nil {
					mu.Lock()
					fails++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}(m)
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Units, res.Errors, res.Requests = acked.Load(), fails, int64(len(lat))
	fillRates(&res, lat)
	res.Note = fmt.Sprintf("%d share members, ShareFetch (≤%d records) + ShareAcknowledge each; latencies are ShareAcknowledge round trips", consumers, o.ShareBatch)
	if firstErr != nil {
		res.Note += "; first error: " + firstErr.Error()
	}
	return res
}

// shareKgo runs consumers franz-go share consumers until every record was delivered and
// accepted (or the duration is over).
func shareKgo(ctx context.Context, o *Options, t Target, run string, consumers int) Result {
	res := Result{Workload: WShareKgo, Target: t.Name, Conns: consumers, Members: consumers, Partitions: 1, UnitName: "records delivered"}
	topic := "bench-sharekgo-" + run + "-" + strconv.Itoa(consumers)
	group := topic + "-g"
	if _, err := shareSetup(ctx, t, topic, group, 1, o.ShareRecords); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	var (
		delivered atomic.Int64
		wg        sync.WaitGroup
	)
	rctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	clients := make([]*kgo.Client, consumers)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(t.Addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
			kgo.FetchMaxWait(100*time.Millisecond), kgo.ShareMaxRecords(int32(o.ShareBatch)))
		if err != nil {
			res.Skipped, res.Note = true, err.Error()
			return res
		}
		clients[i] = cl
	}
	start := time.Now()
	var end atomic.Int64 // when the last record was delivered (ns since start)
	for _, cl := range clients {
		wg.Add(1)
		go func(cl *kgo.Client) {
			defer wg.Done()
			for rctx.Err() == nil {
				fs := cl.PollFetches(rctx)
				n := 0
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					n++
				})
				if delivered.Add(int64(n)) >= int64(o.ShareRecords) {
					end.CompareAndSwap(0, int64(time.Since(start)))
					cancel() // the others wait in PollFetches
					return
				}
			}
		}(cl)
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if e := end.Load(); e > 0 {
		res.Seconds = time.Duration(e).Seconds()
	}
	for _, cl := range clients {
		fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
		_ = cl.FlushAcks(fctx)
		fcancel()
		cl.Close()
	}
	res.Units = delivered.Load()
	res.Requests = res.Units
	fillRates(&res, nil)
	res.Note = fmt.Sprintf("%d kgo share consumers (ShareMaxRecords %d), acknowledgements piggybacked on the next fetch", consumers, o.ShareBatch)
	return res
}

// shareMemory has one member acquire o.ShareMemoryRecords records and hold them, reading the
// broker's memory before and after.
func shareMemory(ctx context.Context, o *Options, t Target, run string) Result {
	res := Result{Workload: WShareMemory, Target: t.Name, Conns: 1, Step: "in-flight", UnitName: "in-flight records"}
	const perPartition = 10000
	partitions := int32((o.ShareMemoryRecords + perPartition - 1) / perPartition)
	res.Partitions = partitions
	topic := "bench-sharemem-" + run
	group := topic + "-g"
	id, err := shareSetup(ctx, t, topic, group, partitions, int(partitions)*perPartition)
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	c, err := dial(t.Addr, ClientRaw)
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	defer c.close()
	m := &shareMember{c: c, group: group, id: "bench-holder", topic: id, maxRecords: 1 << 30}
	for p := int32(0); p < partitions; p++ {
		m.partitions = append(m.partitions, p)
	}
	if err := m.join(ctx, topic); err != nil {
		res.Skipped, res.Note = true, "join: "+err.Error()
		return res
	}
	before, err := readMemory(ctx, t)
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	start := time.Now()
	held := 0
	// Until the broker gives no more (it holds at most share.partition.max.record.locks per
	// partition; kfake's is its default).
	for deadline := time.Now().Add(o.WarmTimeout); held < int(partitions)*perPartition && time.Now().Before(deadline); {
		n, err := m.fetch(ctx, 0)
		if err != nil {
			res.Skipped, res.Note = true, "fetch: "+err.Error()
			return res
		}
		if n == 0 {
			break
		}
		held += n
	}
	res.Seconds = time.Since(start).Seconds()
	after, err := readMemory(ctx, t)
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	res.Units = int64(held)
	res.HeapBefore, res.HeapAfter, res.RSSBefore, res.RSSAfter = before.heap, after.heap, before.rss, after.rss
	if held > 0 {
		if before.heap > 0 {
			res.HeapPerUnit = (after.heap - before.heap) / float64(held)
		}
		res.RSSPerUnit = (after.rss - before.rss) / float64(held)
	}
	res.Note = fmt.Sprintf("one member holds %d records over %d partitions (acquired, not acknowledged)", held, partitions)
	return res
}

// shareServed reports whether t serves the share APIs.
func shareServed(ctx context.Context, t Target) error {
	keys, err := apiKeys(ctx, t.Addr)
	if err != nil {
		return err
	}
	for _, k := range []int16{76, 78, 79} {
		if _, ok := keys[k]; !ok {
			return errors.New("share group APIs (76, 78, 79) not in this server's ApiVersions: skipped")
		}
	}
	return nil
}
