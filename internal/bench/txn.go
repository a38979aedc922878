package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transaction workloads (KIP-98 / KIP-447).
const (
	// WTxn1 is transactions per second, each producing one record to one partition and
	// committing one offset (franz-go transactional clients, one per connection: Begin, produce,
	// AddOffsetsToTxn, TxnOffsetCommit, EndTxn commit).
	WTxn1 = "txn-1"
	// WTxn10 is the same with ten partitions and ten offsets per transaction.
	WTxn10 = "txn-10"
	// WFetchCommitted reads a log of transactions (one in ten aborted) back with read_committed
	// and with read_uncommitted (WFetchUncommitted), alternately, and reports each throughput.
	WFetchCommitted   = "fetch-read-committed"
	WFetchUncommitted = "fetch-read-uncommitted"
	// WTxnRecover opens Options.RecoverTxns transactions (muster only), SIGKILLs muster, starts
	// it on the same data dir and times /readyz (every transaction shard and partition loaded,
	// every open transaction back).
	WTxnRecover = "txn-recover"
)

// txnOp is one transaction of parts partitions with offsets, on connection w's transactional
// client. A transaction started before the run's deadline runs to its end (within a minute):
// cutting it off would leave the client inside a transaction and count nothing on a slow run.
func txnOp(cls []*kgo.Client, topic string, topicParts, parts int, group string) op {
	return func(runCtx context.Context, w int, seq int64) (int64, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), time.Minute)
		defer cancel()
		cl := cls[w]
		if err := cl.BeginTransaction(); err != nil {
			return 0, err
		}
		recs := make([]*kgo.Record, parts)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Partition: int32((w*parts + i) % topicParts), Value: []byte("txn-" + strconv.FormatInt(seq, 10))}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			_ = cl.EndTransaction(ctx, kgo.TryAbort)
			return 0, err
		}
		if err := sendTxnOffsets(ctx, cl, group+"-"+strconv.Itoa(w), topic, recs, seq); err != nil {
			_ = cl.EndTransaction(ctx, kgo.TryAbort)
			return 0, err
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return 0, err
		}
		return 1, nil
	}
}

// sendTxnOffsets adds group's offsets of the records' partitions to the client's transaction.
func sendTxnOffsets(ctx context.Context, cl *kgo.Client, group, topic string, recs []*kgo.Record, seq int64) error {
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	txnID, _ := cl.OptValue(kgo.TransactionalID).(string)
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txnID, pid, epoch, group
	ar, err := ao.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
		return fmt.Errorf("AddOffsetsToTxn: %w", err)
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = txnID, group, pid, epoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	for _, r := range recs {
		p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = r.Partition, seq, -1
		rt.Partitions = append(rt.Partitions, p)
	}
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
	tr, err := tc.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range tr.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("TxnOffsetCommit %s/%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// txnWorkload measures transactions per second of parts partitions (with offsets) on conns
// transactional clients.
func txnWorkload(ctx context.Context, o *Options, t Target, workload, run string, parts, conns int) Result {
	res := Result{Workload: workload, Target: t.Name, Conns: conns, UnitName: "transactions", Partitions: int32(parts)}
	topicParts := max(10, parts)
	topic := "bench-" + workload + "-" + run + "-" + strconv.Itoa(conns)
	if err := createTopic(ctx, t.Addr, topic, int32(topicParts)); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	cls := make([]*kgo.Client, conns)
	defer func() {
		for _, cl := range cls {
			if cl != nil {
				cl.Close()
			}
		}
	}()
	for w := range cls {
		c, err := dialKgo(t.Addr, kgo.TransactionalID(topic+"-"+strconv.Itoa(w)), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(0), kgo.TransactionTimeout(time.Minute))
		if err != nil {
			res.Skipped, res.Note = true, err.Error()
			return res
		}
		cls[w] = c.cl
	}
	fn := txnOp(cls, topic, topicParts, parts, topic+"-g")
	if err := warm(ctx, conns, o.WarmTimeout, fn); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	var m0 map[string]float64
	if t.HTTP != "" {
		m0, _ = scrape(ctx, t.HTTP)
	}
	r := closedLoop(ctx, conns, o.Duration, o.MaxRequests, fn)
	r.Workload, r.Target, r.UnitName, r.Partitions = workload, t.Name, "transactions", int32(parts)
	if m0 != nil && r.Requests > 0 {
		if m1, err := scrape(ctx, t.HTTP); err == nil {
			serverCounters(&r, m0, m1)
		}
	}
	if r.Note == "" {
		r.Note = fmt.Sprintf("each transaction: %d record(s) to %d partition(s) and %d offset(s) of a group, then commit", parts, parts, parts)
	}
	return r
}

// fetchIsolation (WFetchCommitted) writes o.IsolationBytes of transactions (100 records each, one transaction in
// ten aborted) to a 1-partition topic, then reads the whole log back with read_uncommitted and
// read_committed, three times each, alternately; it reports each read's best throughput in
// bytes of the log per second.
func fetchIsolation(ctx context.Context, o *Options, t Target, run string) []Result {
	ru := Result{Workload: WFetchUncommitted, Target: t.Name, Conns: 1, UnitName: "log bytes"}
	rc := ru
	rc.Workload = WFetchCommitted
	fail := func(err error) []Result {
		ru.Skipped, ru.Note, rc.Skipped, rc.Note = true, err.Error(), true, err.Error()
		return []Result{ru, rc}
	}
	topic := "bench-iso-" + run
	if err := createTopic(ctx, t.Addr, topic, 1); err != nil {
		return fail(err)
	}
	p, err := dialKgo(t.Addr, kgo.TransactionalID(topic), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.TransactionTimeout(time.Minute))
	if err != nil {
		return fail(err)
	}
	defer p.close()
	val := make([]byte, o.RecordBytes)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	var written int64
	for txn := 0; written < o.IsolationBytes && ctx.Err() == nil; txn++ {
		if err := p.cl.BeginTransaction(); err != nil {
			return fail(err)
		}
		recs := make([]*kgo.Record, 100)
		for i := range recs {
			recs[i] = &kgo.Record{Value: val}
		}
		if err := p.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fail(err)
		}
		end := kgo.TryCommit
		if txn%10 == 9 {
			end = kgo.TryAbort
		}
		if err := p.cl.EndTransaction(ctx, end); err != nil {
			return fail(err)
		}
		written += int64(len(recs) * len(val))
	}
	read := func(committed bool) (float64, int64, error) {
		iso := kgo.ReadUncommitted()
		if committed {
			iso = kgo.ReadCommitted()
		}
		c, err := dialKgo(t.Addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(50*time.Millisecond), kgo.FetchMaxBytes(16<<20))
		if err != nil {
			return 0, 0, err
		}
		defer c.close()
		start := time.Now()
		var bytes, records int64
		want := written // read_uncommitted sees every record; read_committed nine tenths
		if committed {
			want = written - written/10/int64(len(val)*100)*int64(len(val)*100)
		}
		for bytes < want && ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			fs := c.cl.PollFetches(pctx)
			cancel()
			if err := fs.Err0(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return 0, 0, err
			}
			n := int64(0)
			fs.EachRecord(func(r *kgo.Record) { bytes += int64(len(r.Value)); records++; n++ })
			if n == 0 && pctx.Err() != nil {
				return 0, 0, fmt.Errorf("read %d of %d bytes, then nothing for 10s", bytes, want)
			}
		}
		return time.Since(start).Seconds(), records, nil
	}
	for i := 0; i < 3 && ctx.Err() == nil; i++ {
		for _, r := range []*Result{&ru, &rc} {
			secs, recs, err := read(r == &rc)
			if err != nil {
				r.Skipped, r.Note = true, err.Error()
				continue
			}
			if r.Seconds == 0 || secs < r.Seconds {
				// Log bytes: what the whole log holds (aborted records included), so the two
				// reads of the same log compare; read_committed returns nine tenths of them.
				r.Seconds, r.Units, r.Requests = secs, written, recs
			}
		}
	}
	for _, r := range []*Result{&ru, &rc} {
		if r.Seconds > 0 {
			r.UnitsPerSec = float64(r.Units) / r.Seconds
			r.ReqPerSec = float64(r.Requests) / r.Seconds
		}
	}
	if ru.UnitsPerSec > 0 && rc.UnitsPerSec > 0 {
		rc.Note = fmt.Sprintf("%.2f× read_uncommitted on the same log (%d MiB of transactions, one in ten aborted); best of 3",
			rc.UnitsPerSec/ru.UnitsPerSec, written>>20)
	}
	return []Result{ru, rc}
}

// txnRecover opens n transactions on muster (each: InitProducerId, AddPartitionsToTxn, one
// transactional record), SIGKILLs muster, starts it on the same data dir and times /readyz.
func txnRecover(ctx context.Context, o *Options, t Target, run string, n int) Result {
	res := Result{Workload: WTxnRecover, Target: t.Name, Conns: o.RecoverConns, UnitName: "open transactions"}
	if t.proc == nil || t.HTTP == "" {
		res.Skipped, res.Note = true, "muster not started by bench: no SIGKILL and restart"
		return res
	}
	topic := "bench-recover-" + run
	if err := createTopic(ctx, t.Addr, topic, 16); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	for w := 0; w < o.RecoverConns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := dial(t.Addr, ClientRaw)
			if err == nil {
				defer c.close()
			}
			for err == nil && ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				err = openTxn(ctx, c, topic+"-"+strconv.FormatInt(i, 10), topic, int32(i%16))
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		res.Skipped, res.Note = true, "opening transactions: "+firstErr.Error()
		return res
	}
	_ = t.proc.cmd.Process.Kill()
	<-t.proc.Exited()
	start := time.Now()
	if err := t.proc.spawn(); err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := hc.Get("http://" + t.HTTP + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-t.proc.Exited():
			res.Skipped, res.Note = true, "muster exited during restart: "+t.proc.Output()
			return res
		case <-ctx.Done():
			res.Skipped, res.Note = true, ctx.Err().Error()
			return res
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > 5*time.Minute {
			res.Skipped, res.Note = true, "/readyz not 200 within 5 minutes"
			return res
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.Requests, res.Units = 1, int64(n)
	fillRatesKeep(&res)
	if err := t.proc.waitAPI(ctx); err != nil {
		res.Note = "after restart: " + err.Error()
		return res
	}
	// Every transaction is back, open.
	ongoing, err := countOngoing(ctx, t.Addr)
	res.Note = fmt.Sprintf("SIGKILL with %d transactions open (%d partitions); restart to /readyz; %d Ongoing after the restart", n, 16, ongoing)
	if err != nil {
		res.Note += " (listing: " + err.Error() + ")"
	}
	return res
}

// openTxn opens transaction id on a raw connection: InitProducerId, AddPartitionsToTxn of
// topic/partition, and one transactional record there.
func openTxn(ctx context.Context, c *conn, id, topic string, partition int32) error {
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = &id, 900000
	r, err := c.do(ctx, ip)
	if err != nil {
		return err
	}
	ir := r.(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(ir.ErrorCode); err != nil {
		return fmt.Errorf("InitProducerId: %w", err)
	}
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.Version = 3
	ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = id, ir.ProducerID, ir.ProducerEpoch
	ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: []int32{partition}}}
	r, err = c.do(ctx, ap)
	if err != nil {
		return err
	}
	for _, t := range r.(*kmsg.AddPartitionsToTxnResponse).Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("AddPartitionsToTxn: %w", err)
			}
		}
	}
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TimeoutMillis, pr.TransactionID = -1, 30000, &id
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: partition,
		Records: txnBatch(ir.ProducerID, ir.ProducerEpoch, []byte(id))}}}}
	r, err = c.do(ctx, pr)
	if err != nil {
		return err
	}
	if code := r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		return fmt.Errorf("Produce: %w", kerr.ErrorForCode(code))
	}
	return nil
}

// txnBatch is a transactional record batch of one record (sequence 0).
func txnBatch(pid int64, epoch int16, value []byte) []byte {
	rec := kmsg.NewRecord()
	rec.Value = value
	body := rec.AppendTo(nil)
	rec.Length = int32(len(body) - len(binary.AppendVarint(nil, int64(rec.Length))))
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: 0x10, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: pid, ProducerEpoch: epoch, NumRecords: 1, Records: rec.AppendTo(nil)}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// countOngoing counts the broker's Ongoing transactions (ListTransactions).
func countOngoing(ctx context.Context, addr string) (int, error) {
	c, err := dial(addr, ClientRaw)
	if err != nil {
		return 0, err
	}
	defer c.close()
	req := kmsg.NewPtrListTransactionsRequest()
	req.StateFilters = []string{"Ongoing"}
	r, err := c.do(ctx, req)
	if err != nil {
		return 0, err
	}
	resp := r.(*kmsg.ListTransactionsResponse)
	return len(resp.TransactionStates), kerr.ErrorForCode(resp.ErrorCode)
}
