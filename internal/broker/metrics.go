package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/console"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/store/diskguard"
)

// runtimeMetrics are the coordinator runtime's own metrics (Kafka's
// GroupCoordinatorRuntimeMetrics in spirit): batch commits, their size and latency, shard loads.
type runtimeMetrics struct {
	guard         *diskguard.Guard // told about failed commits
	commitLatency *prometheus.HistogramVec
	batchSize     prometheus.Histogram
	commitErrors  prometheus.Counter
	loadTime      *prometheus.GaugeVec
	loadRecords   *prometheus.GaugeVec
	loadErrors    prometheus.Counter
}

func newRuntimeMetrics(g *diskguard.Guard) *runtimeMetrics {
	return &runtimeMetrics{
		guard: g,
		commitLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "muster", Subsystem: "coordinator", Name: "batch_commit_seconds",
			Help:    "Latency of one durable batch commit (fsync included).",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16),
		}, []string{"result"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "muster", Subsystem: "coordinator", Name: "batch_records",
			Help: "Records per committed batch (group commit).", Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "muster", Subsystem: "coordinator", Name: "batch_commit_errors_total",
			Help: "Batch commits that failed (the shard reloads; its requests get NOT_COORDINATOR).",
		}),
		loadTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "muster", Subsystem: "coordinator", Name: "shard_load_seconds",
			Help: "Time the last load of each shard took.",
		}, []string{"shard"}),
		loadRecords: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "muster", Subsystem: "coordinator", Name: "shard_load_records",
			Help: "Records replayed by the last load of each shard.",
		}, []string{"shard"}),
		loadErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "muster", Subsystem: "coordinator", Name: "shard_load_errors_total",
			Help: "Shard loads that failed (retried with back-off).",
		}),
	}
}

func (m *runtimeMetrics) hooks() engine.Hooks {
	return engine.Hooks{
		OnCommit: func(shard int32, n int, d time.Duration, err error) {
			res := "ok"
			if err != nil {
				res = "error"
				m.commitErrors.Inc()
				m.guard.ReportError(err) // a store that fails writes degrades the node
			}
			m.commitLatency.WithLabelValues(res).Observe(d.Seconds())
			m.batchSize.Observe(float64(n))
		},
		OnLoad: func(shard int32, n int, d time.Duration, err error) {
			s := strconv.Itoa(int(shard))
			if err != nil {
				m.loadErrors.Inc()
			}
			m.loadTime.WithLabelValues(s).Set(d.Seconds())
			m.loadRecords.WithLabelValues(s).Set(float64(n))
		},
	}
}

func (m *runtimeMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.commitLatency, m.batchSize, m.commitErrors, m.loadTime, m.loadRecords, m.loadErrors)
}

// groupCollector reads the shards' group-coordinator metrics on each scrape (an op per shard,
// so the loop-owned counters are read race-free).
type groupCollector struct{ b *Broker }

var (
	descCounters = map[string]*prometheus.Desc{}
	counterNames = []struct{ name, help string }{
		{"offset_commits_total", "Committed offsets (Kafka offset-commit-count)."},
		{"offset_expirations_total", "Offsets expired by retention (Kafka offset-expiration-count)."},
		{"offset_deletions_total", "Offsets deleted administratively by OffsetDelete (Kafka offset-deletion-count)."},
		{"group_completed_rebalances_total", "Classic rebalances completed (Kafka group-completed-rebalance-count)."},
		{"consumer_group_rebalances_total", "Consumer group epoch bumps (Kafka consumer-group-rebalance-count)."},
		{"streams_group_rebalances_total", "Streams group epoch bumps (Kafka streams-group-rebalance-count)."},
		{"share_group_rebalances_total", "Share group epoch bumps (Kafka share-group-rebalance-count)."},
	}
	descOffsetCount   = prometheus.NewDesc("muster_group_coordinator_offset_count", "Committed offsets held (Kafka offset-count).", nil, nil)
	descGroupCount    = prometheus.NewDesc("muster_group_coordinator_group_count", "Groups by protocol (Kafka group-count).", []string{"protocol"}, nil)
	descClassicCount  = prometheus.NewDesc("muster_group_coordinator_classic_group_count", "Classic groups by state (Kafka classic-group-count).", []string{"state"}, nil)
	descConsumerCount = prometheus.NewDesc("muster_group_coordinator_consumer_group_count", "Consumer groups by state (Kafka consumer-group-count).", []string{"state"}, nil)
	descStreamsCount  = prometheus.NewDesc("muster_group_coordinator_streams_group_count", "Streams groups by state (Kafka streams-group-count).", []string{"state"}, nil)
	descShareCount    = prometheus.NewDesc("muster_group_coordinator_share_group_count", "Share groups by state (Kafka share-group-count).", []string{"state"}, nil)
	descQueue         = prometheus.NewDesc("muster_coordinator_event_queue_depth", "Operations waiting in each shard's queue.", []string{"shard"}, nil)
	descShardState    = prometheus.NewDesc("muster_coordinator_shards", "Coordinator shards by status (loading, active, failed).", []string{"status"}, nil)
	descConns         = prometheus.NewDesc("muster_connections_open", "Open Kafka connections.", nil, nil)
	descBadFrames     = prometheus.NewDesc("muster_bad_frames_total", "Connections closed for bad input (oversized or malformed frames, unknown keys or versions).", nil, nil)
	descRequests      = prometheus.NewDesc("muster_requests_total", "Requests by API.", []string{"api"}, nil)
	descRebalances    = prometheus.NewDesc("muster_group_coordinator_rebalances_by_cause_total",
		"Group epoch bumps (classic generation bumps) by group type and main cause, as the rebalance history records them.", []string{"group_type", "cause"}, nil)
)

func init() {
	for _, c := range counterNames {
		descCounters[c.name] = prometheus.NewDesc("muster_group_coordinator_"+c.name, c.help, nil, nil)
	}
}

func (g groupCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descCounters {
		ch <- d
	}
	describeShare(ch)
	for _, d := range []*prometheus.Desc{descOffsetCount, descGroupCount, descClassicCount, descConsumerCount, descStreamsCount, descShareCount, descQueue, descShardState, descConns, descBadFrames, descRequests, descRebalances} {
		ch <- d
	}
}

func (g groupCollector) Collect(ch chan<- prometheus.Metric) {
	if !g.b.serving.Load() {
		return // starting: the coordinator does not exist yet
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var sum coordinator.ShardMetrics
	offsets := 0
	byProto := map[string]int{"classic": 0, "consumer": 0, "streams": 0, "share": 0}
	byState := map[coordinator.GroupType]map[string]int{
		coordinator.TypeClassic:  {"PreparingRebalance": 0, "CompletingRebalance": 0, "Stable": 0, "Dead": 0, "Empty": 0},
		coordinator.TypeConsumer: {"Empty": 0, "Assigning": 0, "Reconciling": 0, "Stable": 0, "Dead": 0},
		coordinator.TypeStreams:  {"Empty": 0, "NotReady": 0, "Assigning": 0, "Reconciling": 0, "Stable": 0, "Dead": 0},
		coordinator.TypeShare:    {"Empty": 0, "Stable": 0, "Dead": 0},
	}
	// One read-only operation per shard, in parallel; a loading or failed shard is skipped for
	// this scrape.
	snaps, ok := g.b.svc.Stats(ctx)
	rebalances := map[coordinator.RebalanceKey]int64{}
	for _, t := range []coordinator.GroupType{coordinator.TypeClassic, coordinator.TypeConsumer, coordinator.TypeStreams, coordinator.TypeShare} {
		for _, c := range coordinator.AllCauses {
			rebalances[coordinator.RebalanceKey{Type: t, Cause: c}] = 0
		}
	}
	for i, s := range snaps {
		if !ok[i] {
			continue
		}
		for k, n := range s.Metrics.Rebalances {
			rebalances[k] += n
		}
		sum.OffsetCommits += s.Metrics.OffsetCommits
		sum.OffsetExpirations += s.Metrics.OffsetExpirations
		sum.OffsetDeletions += s.Metrics.OffsetDeletions
		sum.CompletedRebalances += s.Metrics.CompletedRebalances
		sum.ConsumerRebalances += s.Metrics.ConsumerRebalances
		sum.StreamsRebalances += s.Metrics.StreamsRebalances
		addShareMetrics(&sum.ShareMetrics, &s.Metrics.ShareMetrics)
		offsets += s.Offsets
		for t, states := range s.Groups {
			for st, n := range states {
				byProto[string(t)] += n
				if byState[t] == nil {
					byState[t] = map[string]int{}
				}
				byState[t][st] += n
			}
		}
	}
	vals := map[string]int64{
		"offset_commits_total": sum.OffsetCommits, "offset_expirations_total": sum.OffsetExpirations,
		"offset_deletions_total": sum.OffsetDeletions, "group_completed_rebalances_total": sum.CompletedRebalances,
		"consumer_group_rebalances_total": sum.ConsumerRebalances, "streams_group_rebalances_total": sum.StreamsRebalances,
		"share_group_rebalances_total": sum.ShareRebalances,
	}
	collectShare(ch, &sum.ShareMetrics, g.b.svc.ShareSessionCount())
	for name, v := range vals {
		ch <- prometheus.MustNewConstMetric(descCounters[name], prometheus.CounterValue, float64(v))
	}
	for k, n := range rebalances {
		ch <- prometheus.MustNewConstMetric(descRebalances, prometheus.CounterValue, float64(n), string(k.Type), string(k.Cause))
	}
	ch <- prometheus.MustNewConstMetric(descOffsetCount, prometheus.GaugeValue, float64(offsets))
	for p, n := range byProto {
		ch <- prometheus.MustNewConstMetric(descGroupCount, prometheus.GaugeValue, float64(n), p)
	}
	for t, desc := range map[coordinator.GroupType]*prometheus.Desc{coordinator.TypeClassic: descClassicCount, coordinator.TypeConsumer: descConsumerCount, coordinator.TypeStreams: descStreamsCount, coordinator.TypeShare: descShareCount} {
		for st, n := range byState[t] {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), st)
		}
	}
	for i, d := range g.b.rt.QueueDepth() {
		ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(d), strconv.Itoa(i))
	}
	status := map[string]int{"loading": 0, "active": 0, "failed": 0}
	for _, s := range g.b.rt.ShardStatus() {
		status[s]++
	}
	for s, n := range status {
		ch <- prometheus.MustNewConstMetric(descShardState, prometheus.GaugeValue, float64(n), s)
	}
	ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(g.b.srv.Stats.ConnectionsOpen.Load()))
	ch <- prometheus.MustNewConstMetric(descBadFrames, prometheus.CounterValue, float64(g.b.srv.Stats.BadFrames.Load()))
	for k := range g.b.srv.Stats.Requests {
		if n := g.b.srv.Stats.Requests[k].Load(); n > 0 {
			ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), apiName(int16(k)))
		}
	}
}

// operatorListener is the listener the console's operator actions connect to: the first
// PLAINTEXT one ("" when every listener needs TLS or SASL, and the console's actions fail with
// a message saying so until the console authenticates as a principal of its own).
func (b *Broker) operatorListener() string {
	for _, bl := range b.lns {
		if bl.l.Protocol == security.Plaintext {
			return bl.ln.Addr().String()
		}
	}
	return ""
}

// startConsole builds the web console once the coordinator and the data plane are up.
func (b *Broker) startConsole() {
	if b.httpSrv == nil || !b.opts.Config.Bool("muster.console.enable") {
		return
	}
	b.console = console.New(console.Deps{Coordinator: b.svc, Plane: b.plane, Lag: b.lag,
		Operator: &console.CLIOperator{Bootstrap: b.operatorListener(), Tools: b.opts.Tools},
		NodeID:   b.opts.Config.NodeID(), Kafka: b.Addr(), Now: b.opts.Clock.Now, Log: b.log})
	b.console.Start()
	b.consoleReady.Store(b.console)
}

func (b *Broker) startHTTP() error {
	b.reg = prometheus.NewRegistry()
	b.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	b.metrics.register(b.reg)
	b.clusterMetrics.register(b.reg)
	b.reg.MustRegister(groupCollector{b})
	b.reg.MustRegister(topoDescCollector{b})
	b.reg.MustRegister(txnCollector{b}, b.txnMetrics.markers)
	b.reg.MustRegister(b.secMetrics.auth, b.secMetrics.denials)
	if b.reqMetrics != nil {
		b.reg.MustRegister(b.reqMetrics)
	}
	b.reg.MustRegister(lagCollector{b})
	b.reg.MustRegister(storageCollector{b.guard})
	b.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "muster_store_wal_syncs_total",
		Help: "fsyncs of the store's write-ahead log (group commit: committed records per sync = rate(muster_coordinator_batch_records_sum) / rate(this))."},
		func() float64 { return float64(b.walFS.WALSyncs.Load()) }))
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !b.serving.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			msg := "starting: opening the store in " + b.opts.DataDir
			if p := b.startPhase.Load(); p != nil {
				msg = "starting: " + *p
			}
			if _, note := storageReadiness(b.guard); note != "" {
				msg += "; " + note
			}
			fmt.Fprintf(w, "not ready: %s\n", msg)
			return
		}
		st := b.rt.ShardStatus()
		var notReady []string
		for i, s := range st {
			if s != "active" && s != "unowned" { // unowned: served by another cluster node
				notReady = append(notReady, fmt.Sprintf("shard %d %s", i, s))
			}
		}
		for i, s := range b.txnRT.ShardStatus() {
			if s != "active" && s != "unowned" {
				notReady = append(notReady, fmt.Sprintf("transaction shard %d %s", i, s))
			}
		}
		clusterOK, clusterNote := b.clusterReadiness()
		if !clusterOK {
			notReady = append([]string{clusterNote}, notReady...)
		}
		// A failed store is not ready (it serves reads only); one short of space is ready and
		// says so (reads, deletes and retention work; writes that grow it are refused).
		storeOK, note := storageReadiness(b.guard)
		if !storeOK {
			notReady = append([]string{note}, notReady...)
		}
		if len(notReady) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %s\n", strings.Join(notReady, ", "))
			return
		}
		if note != "" {
			fmt.Fprintf(w, "ready: %d shards loaded; %s\n", len(st), note)
			return
		}
		if clusterNote != "" {
			fmt.Fprintf(w, "ready: %s\n", clusterNote)
			return
		}
		fmt.Fprintf(w, "ready: %d shards loaded\n", len(st))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(b.reg, promhttp.HandlerOpts{}))
	// Go profiles for operators chasing a slow broker (CPU, heap, goroutines, mutex, block).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if b.opts.Config.Bool("muster.console.enable") {
		// The console's routes answer 503 until the broker has built what they read.
		starting := func(w http.ResponseWriter, r *http.Request) {
			c := b.consoleReady.Load()
			if c == nil {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "muster is starting: the console serves once the store is open", http.StatusServiceUnavailable)
				return
			}
			c.ServeHTTP(w, r)
		}
		mux.HandleFunc("/ui", starting)
		mux.HandleFunc("/ui/", starting)
		mux.HandleFunc("/api/", starting)
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui", http.StatusFound) })
	}
	ln, err := net.Listen("tcp", b.opts.HTTPListen)
	if err != nil {
		return fmt.Errorf("http listen %s: %w", b.opts.HTTPListen, err)
	}
	b.httpLn = ln
	b.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if err := b.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.log.Error("http listener stopped", "err", err)
		}
	}()
	return nil
}

func apiName(k int16) string { return kmsg.NameForKey(k) }
