package txn_test

import (
	"fmt"
	"log/slog"
	"math/rand"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

var t0 = time.UnixMilli(1_700_000_000_000)

// harness drives one transaction coordinator shard synchronously, as the engine would: each
// step runs one operation or the timers due, "commits" its records to an in-memory log and
// releases its replies. Producer ids are allocated from 1000 up when an InitProducerId asks.
type harness struct {
	cfg     *txn.Config
	st      *txn.ShardState
	now     time.Time
	log     []coordinator.Record
	nextPID int64
	due     *dueSignal
}

// dueSignal counts the driver's markers-due notifications.
type dueSignal struct{ n int }

func (d *dueSignal) Release()   { d.n++ }
func (d *dueSignal) Fail(error) {}

func newHarness(overrides ...string) *harness {
	h := &harness{cfg: txn.ConfigFrom(config.Defaults(overrides...)), now: t0, nextPID: 1000, due: &dueSignal{}}
	h.st = txn.NewShardState(0, h.cfg, slog.New(slog.DiscardHandler), h.due)
	h.st.OnLoaded(h.now)
	h.commit()
	return h
}

type result[T any] struct {
	resp T
	err  error
}

func (r *result[T]) Set(resp T, err error) { r.resp, r.err = resp, err }
func (r *result[T]) Release()              {}
func (r *result[T]) Fail(err error)        { r.err = err }

func do[T any](h *harness, op func(*txn.ShardState, *coordinator.Call[T])) T {
	r := &result[T]{}
	h.st.SetNow(h.now)
	op(h.st, coordinator.NewCall(coordinator.Meta{}, coordinator.Waiter[T](r)))
	h.commit()
	return r.resp
}

func (h *harness) commit() {
	e := h.st.TakeEffects()
	h.log = append(h.log, e.Records...)
	for _, p := range e.Replies {
		p.Release()
	}
}

func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.st.FireTimers(h.now)
	h.commit()
}

// latest is the live content of the log (last value per key, tombstones dropped), shuffled.
func latest(log []coordinator.Record, seed int64) []coordinator.Record {
	last := map[string]coordinator.Record{}
	for _, r := range log {
		last[string(r.Key)] = r
	}
	var out []coordinator.Record
	for _, r := range last {
		if r.Value != nil {
			out = append(out, r)
		}
	}
	rand.New(rand.NewSource(seed)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (h *harness) reload(seed int64) (*txn.ShardState, error) {
	st := txn.NewShardState(0, h.cfg, slog.New(slog.DiscardHandler), h.due)
	for _, r := range latest(h.log, seed) {
		if err := st.Replay(r); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// checkReplay: a fresh shard replaying the live records holds exactly the live state.
func (h *harness) checkReplay(seed int64) string {
	re, err := h.reload(seed)
	if err != nil {
		return err.Error()
	}
	if !reflect.DeepEqual(h.st.Txns, re.Txns) {
		return fmt.Sprintf("live %s\nreloaded %s", dump(h.st.Txns), dump(re.Txns))
	}
	return ""
}

func dump(m map[string]*txn.Metadata) string {
	var ids []string
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%+v\n", *m[id])
	}
	return b.String()
}

func (h *harness) initPID(req *kmsg.InitProducerIDRequest) txn.InitResult {
	r := do(h, txn.InitProducerID(req, -1))
	if r.NeedProducerID {
		pid := h.nextPID
		h.nextPID++
		r = do(h, txn.InitProducerID(req, pid))
	}
	return r
}

// completeAll writes (pretends to write) the markers of every prepared transaction and
// completes it, as the adapters' marker writer does.
func (h *harness) completeAll(b *strings.Builder) {
	for _, p := range do(h, txn.PreparedTxns("")) {
		ok := do(h, txn.CompleteTxn(p))
		fmt.Fprintf(b, "markers %s producer=%d epoch=%d commit=%v partitions=%s completed=%v\n", p.ID, p.ProducerID, p.Epoch, p.Commit, tps(p.Partitions), ok)
	}
}

func tps(ps []txn.TopicPartition) string {
	var s []string
	for _, tp := range ps {
		s = append(s, fmt.Sprintf("%s:%d", tp.Topic, tp.Partition))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

func errName(err *kerr.Error) string {
	if err == nil {
		return "NONE"
	}
	return err.Message
}

func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

// TestScenarios runs the transaction coordinator's scripted scenarios (testdata/scenarios):
// every state transition and error code, with a manual clock, and after every command the
// replay-equivalence check. Regenerate with -rewrite and review the diff.
//
// Commands (key=value arguments):
//
//	config key=value ...
//	init id=x [timeout=60s] [pid=P epoch=E] [version=4]     InitProducerId
//	add id=x pid=P epoch=E partitions=t:0,1;u:2 [version=3]  AddPartitionsToTxn
//	offsets id=x pid=P epoch=E group=g [version=3]           AddOffsetsToTxn
//	verify id=x pid=P epoch=E partitions=t:0                 verification (KIP-890 part 1)
//	end id=x pid=P epoch=E result=commit|abort [version=3]   EndTxn
//	markers                                                  write and complete every prepared transaction
//	describe ids=x,y                                         DescribeTransactions
//	list [states=Ongoing] [pids=1] [duration=10s] [pattern=re]
//	advance 10s                                              move the clock, fire the timers
//	records                                                  the records written since the last `records`
//	reload                                                   restart the shard from its records
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		var h *harness
		logged := 0
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "config" {
				var ov []string
				for _, a := range d.CmdArgs {
					ov = append(ov, a.Key+"="+strings.Join(a.Vals, ","))
				}
				h = newHarness(ov...)
				return "ok\n"
			}
			if h == nil {
				h = newHarness()
			}
			dueBefore := h.due.n
			var b strings.Builder
			arg := func(k, def string) string {
				if !d.HasArg(k) {
					return def
				}
				var v string
				d.ScanArgs(t, k, &v)
				return v
			}
			num := func(k string, def int64) int64 {
				n, err := strconv.ParseInt(arg(k, strconv.FormatInt(def, 10)), 10, 64)
				if err != nil {
					d.Fatalf(t, "%s: %v", k, err)
				}
				return n
			}
			parts := func() []txn.TopicPartition {
				var out []txn.TopicPartition
				for _, tp := range strings.Split(arg("partitions", ""), ";") {
					topic, ps, _ := strings.Cut(tp, ":")
					for _, p := range strings.Split(ps, ",") {
						n, _ := strconv.Atoi(p)
						out = append(out, txn.TopicPartition{Topic: topic, Partition: int32(n)})
					}
				}
				return out
			}
			id, pid, epoch, version := arg("id", ""), num("pid", -1), int16(num("epoch", -1)), int16(num("version", 3))
			switch d.Cmd {
			case "init":
				req := kmsg.NewPtrInitProducerIDRequest()
				req.Version = int16(num("version", 4))
				req.TransactionalID = &id
				dur, _ := time.ParseDuration(arg("timeout", "60s"))
				req.TransactionTimeoutMillis = int32(dur.Milliseconds())
				req.ProducerID, req.ProducerEpoch = pid, epoch
				r := h.initPID(req).Resp
				fmt.Fprintf(&b, "init %s: %s producer=%d epoch=%d\n", id, codeName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
			case "add":
				err := do(h, txn.AddPartitions(id, pid, epoch, parts()))
				fmt.Fprintf(&b, "add: %s\n", errOf(err))
			case "offsets":
				g := arg("group", "")
				err := do(h, txn.AddPartitions(id, pid, epoch, []txn.TopicPartition{{Topic: txn.OffsetsTopic, Partition: coordinator.ShardFor(g, h.cfg.GroupShards)}}))
				fmt.Fprintf(&b, "offsets: %s\n", errOf(err))
			case "verify":
				ps := parts()
				errs := do(h, txn.Verify(id, pid, epoch, ps))
				b.WriteString("verify:")
				for i, tp := range ps {
					fmt.Fprintf(&b, " %s:%d=%s", tp.Topic, tp.Partition, errName(errs[i]))
				}
				b.WriteString("\n")
			case "end":
				r := do(h, txn.EndTxn(id, pid, epoch, arg("result", "") == "commit"))
				fmt.Fprintf(&b, "end %s: %s prepared=%v\n", arg("result", ""), errName(r.Err), r.Prepared)
			case "markers":
				h.completeAll(&b)
				if b.Len() == 0 {
					b.WriteString("no prepared transactions\n")
				}
			case "describe":
				for _, s := range do(h, txn.Describe(strings.Split(arg("ids", ""), ","))) {
					fmt.Fprintf(&b, "%s: %s", s.TransactionalID, codeName(s.ErrorCode))
					if s.ErrorCode == 0 {
						var ps []txn.TopicPartition
						for _, t := range s.Topics {
							for _, p := range t.Partitions {
								ps = append(ps, txn.TopicPartition{Topic: t.Topic, Partition: p})
							}
						}
						fmt.Fprintf(&b, " state=%s producer=%d epoch=%d timeout=%d start=%+d partitions=%s", s.State, s.ProducerID, s.ProducerEpoch,
							s.TimeoutMillis, relMs(h, s.StartTimestamp), tps(ps))
					}
					b.WriteString("\n")
				}
			case "list":
				f := txn.ListFilter{MinDuration: -1}
				if v := arg("states", ""); v != "" {
					f.States = map[txn.State]bool{}
					for _, n := range strings.Split(v, ",") {
						s, _ := txn.ParseState(n)
						f.States[s] = true
					}
				}
				if v := arg("pids", ""); v != "" {
					f.ProducerIDs = map[int64]bool{}
					for _, n := range strings.Split(v, ",") {
						p, _ := strconv.ParseInt(n, 10, 64)
						f.ProducerIDs[p] = true
					}
				}
				if v := arg("duration", ""); v != "" {
					dur, _ := time.ParseDuration(v)
					f.MinDuration = dur.Milliseconds()
				}
				if v := arg("pattern", ""); v != "" {
					f.Pattern = regexp.MustCompile(v)
				}
				for _, s := range do(h, txn.List(f)) {
					fmt.Fprintf(&b, "%s producer=%d %s\n", s.TransactionalID, s.ProducerID, s.TransactionState)
				}
				if b.Len() == 0 {
					b.WriteString("no transactions\n")
				}
			case "advance":
				dur, err := time.ParseDuration(d.CmdArgs[0].Key)
				if err != nil {
					d.Fatalf(t, "advance: %v", err)
				}
				h.advance(dur)
				fmt.Fprintf(&b, "now +%s\n", h.now.Sub(t0))
			case "records":
				for _, r := range h.log[logged:] {
					b.WriteString(recordString(h, r) + "\n")
				}
				logged = len(h.log)
				if b.Len() == 0 {
					b.WriteString("no records\n")
				}
			case "reload":
				st, err := h.reload(1)
				if err != nil {
					d.Fatalf(t, "reload: %v", err)
				}
				h.st = st
				h.st.OnLoaded(h.now)
				h.commit()
				h.advance(0) // the engine runs the timers due right after a load
				b.WriteString("reloaded\n")
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			_ = version
			if n := h.due.n - dueBefore; n > 0 {
				fmt.Fprintf(&b, "(markers due)\n")
			}
			if diff := h.checkReplay(int64(d.Pos[len(d.Pos)-1])); diff != "" {
				t.Fatalf("%s: %s: the state differs from a reload of the records:\n%s", d.Pos, d.Cmd, diff)
			}
			return b.String()
		})
	})
}

func errOf(err error) string {
	if err == nil {
		return "NONE"
	}
	var ke *kerr.Error
	if e, ok := err.(*kerr.Error); ok {
		ke = e
		return ke.Message
	}
	return err.Error()
}

func relMs(h *harness, ms int64) int64 {
	if ms < 0 {
		return ms
	}
	return ms - t0.UnixMilli()
}

func recordString(h *harness, r coordinator.Record) string {
	var k kmsg.TxnMetadataKey
	_ = k.ReadFrom(r.Key)
	if r.Value == nil {
		return k.TransactionalID + " tombstone"
	}
	var v kmsg.TxnMetadataValue
	_ = v.ReadFrom(r.Value)
	var ps []txn.TopicPartition
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			ps = append(ps, txn.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return fmt.Sprintf("%s %s producer=%d epoch=%d partitions=%s start=%+d", k.TransactionalID, txn.State(v.State),
		v.ProducerID, v.ProducerEpoch, tps(ps), relMs(h, v.StartTimestamp))
}

// TestReplayEquivalenceProperty drives a shard with random operations of a few producers
// (InitProducerId with and without KIP-360 epochs, AddPartitions, AddOffsets, EndTxn, markers
// written for some prepared transactions and not others, timeouts, expiry, restarts with
// transactions half-finished) and checks after every step that a fresh shard replaying the
// records holds exactly the live state.
func TestReplayEquivalenceProperty(t *testing.T) {
	runs := 30
	if testing.Short() {
		runs = 5
	}
	for seed := int64(1); seed <= int64(runs); seed++ {
		rnd := rand.New(rand.NewSource(seed))
		h := newHarness("transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
			"transactional.id.expiration.ms=30000", "transaction.remove.expired.transaction.cleanup.interval.ms=5000")
		ids := []string{"a", "b", "c"}
		known := map[string][2]int64{} // id → producer id, epoch the "client" holds
		var trace []string
		for step := 0; step < 200; step++ {
			id := ids[rnd.Intn(len(ids))]
			k, have := known[id]
			var what string
			switch n := rnd.Intn(100); {
			case n < 15 || !have:
				req := kmsg.NewPtrInitProducerIDRequest()
				req.Version, req.TransactionalID = 4, &id
				req.TransactionTimeoutMillis = int32(1000 + rnd.Intn(10000))
				req.ProducerID, req.ProducerEpoch = -1, -1
				if have && rnd.Intn(2) == 0 {
					req.ProducerID, req.ProducerEpoch = k[0], int16(k[1])
				}
				r := h.initPID(req).Resp
				if r.ErrorCode == 0 {
					known[id] = [2]int64{r.ProducerID, int64(r.ProducerEpoch)}
				}
				what = fmt.Sprintf("init %s: %s", id, codeName(r.ErrorCode))
			case n < 45:
				p := txn.TopicPartition{Topic: []string{"t", "u"}[rnd.Intn(2)], Partition: int32(rnd.Intn(3))}
				if rnd.Intn(4) == 0 {
					p = txn.TopicPartition{Topic: txn.OffsetsTopic, Partition: int32(rnd.Intn(50))}
				}
				err := do(h, txn.AddPartitions(id, k[0], int16(k[1]), []txn.TopicPartition{p}))
				what = fmt.Sprintf("add %s %v: %v", id, p, err)
			case n < 65:
				r := do(h, txn.EndTxn(id, k[0], int16(k[1]), rnd.Intn(2) == 0))
				what = fmt.Sprintf("end %s: %v", id, r.Err)
			case n < 80:
				for _, p := range do(h, txn.PreparedTxns("")) {
					if rnd.Intn(2) == 0 {
						do(h, txn.CompleteTxn(p))
					}
				}
				what = "markers (some)"
			case n < 92:
				d := time.Duration(rnd.Intn(8000)) * time.Millisecond
				h.advance(d)
				what = "advance " + d.String()
			default:
				st, err := h.reload(seed + int64(step))
				if err != nil {
					t.Fatal(err)
				}
				h.st = st
				h.st.OnLoaded(h.now)
				h.commit()
				what = "restart"
			}
			trace = append(trace, what)
			if diff := h.checkReplay(seed*1000 + int64(step)); diff != "" {
				t.Fatalf("seed %d step %d (%s): %s\ntrace: %v", seed, step, what, diff, trace)
			}
		}
	}
}
