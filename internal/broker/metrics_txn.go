package broker

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/muster-io/muster/internal/coordinator/txn"
	"github.com/muster-io/muster/internal/coordinator/txnapi"
)

// txnMetrics are the transaction coordinator's own metrics: how long writing a transaction's
// markers took.
type txnMetrics struct {
	markers *prometheus.HistogramVec
}

func newTxnMetrics() *txnMetrics {
	return &txnMetrics{markers: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "muster", Subsystem: "transaction", Name: "markers_seconds",
		Help:    "Time to write a prepared transaction's markers into all its partitions and record its completion.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"result", "outcome"})}
}

func (m *txnMetrics) hooks() txnapi.Hooks {
	return txnapi.Hooks{OnMarkers: func(commit bool, _ int, d time.Duration, err error) {
		res, out := "ok", "abort"
		if err != nil {
			res = "error"
		}
		if commit {
			out = "commit"
		}
		m.markers.WithLabelValues(res, out).Observe(d.Seconds())
	}}
}

// txnCollector reads the transaction coordinator's shards (counters and transactions by state)
// and the data plane's partitions (last stable offset lag, open transactions) on each scrape.
type txnCollector struct{ b *Broker }

var (
	descTxnStarted   = prometheus.NewDesc("muster_transactions_started_total", "Transactions begun (first partition added).", nil, nil)
	descTxnCommitted = prometheus.NewDesc("muster_transactions_committed_total", "Transactions completed with COMMIT markers.", nil, nil)
	descTxnAborted   = prometheus.NewDesc("muster_transactions_aborted_total", "Transactions completed with ABORT markers (timed-out and fenced ones included).", nil, nil)
	descTxnTimedOut  = prometheus.NewDesc("muster_transactions_timed_out_total", "Transactions aborted because they outlived transaction.timeout.ms.", nil, nil)
	descTxnFenced    = prometheus.NewDesc("muster_transactions_fenced_total", "Ongoing transactions aborted because a new producer with the same transactional id initialized.", nil, nil)
	descTxnExpired   = prometheus.NewDesc("muster_transactional_ids_expired_total", "Transactional ids removed after transactional.id.expiration.ms.", nil, nil)
	descTxnStates    = prometheus.NewDesc("muster_transactions", "Transactional ids by state.", []string{"state"}, nil)
	descLSOLag       = prometheus.NewDesc("muster_partition_last_stable_offset_lag", "High watermark minus last stable offset per partition (Kafka's LastStableOffsetLag): records held back from read_committed consumers by open transactions.", []string{"topic", "partition"}, nil)
	descOpenTxns     = prometheus.NewDesc("muster_partition_open_transactions", "Open transactions per partition.", []string{"topic", "partition"}, nil)
)

func (c txnCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTxnStarted, descTxnCommitted, descTxnAborted, descTxnTimedOut, descTxnFenced, descTxnExpired, descTxnStates, descLSOLag, descOpenTxns} {
		ch <- d
	}
}

func (c txnCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.b.serving.Load() {
		return // still starting
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var sum txn.Metrics
	states := map[string]int{}
	for _, s := range []txn.State{txn.Empty, txn.Ongoing, txn.PrepareCommit, txn.PrepareAbort, txn.CompleteCommit, txn.CompleteAbort} {
		states[s.String()] = 0
	}
	for _, st := range c.b.txnSvc.Stats(ctx) {
		sum.Started += st.Metrics.Started
		sum.Committed += st.Metrics.Committed
		sum.Aborted += st.Metrics.Aborted
		sum.TimedOut += st.Metrics.TimedOut
		sum.Fenced += st.Metrics.Fenced
		sum.Expired += st.Metrics.Expired
		for s, n := range st.States {
			states[s.String()] += n
		}
	}
	for d, v := range map[*prometheus.Desc]int64{descTxnStarted: sum.Started, descTxnCommitted: sum.Committed,
		descTxnAborted: sum.Aborted, descTxnTimedOut: sum.TimedOut, descTxnFenced: sum.Fenced, descTxnExpired: sum.Expired} {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	for s, n := range states {
		ch <- prometheus.MustNewConstMetric(descTxnStates, prometheus.GaugeValue, float64(n), s)
	}
	for _, p := range c.b.plane.TxnStats() {
		part := strconv.Itoa(int(p.Partition))
		ch <- prometheus.MustNewConstMetric(descLSOLag, prometheus.GaugeValue, float64(p.HighWatermark-p.LastStable), p.Topic, part)
		ch <- prometheus.MustNewConstMetric(descOpenTxns, prometheus.GaugeValue, float64(p.OpenTxns), p.Topic, part)
	}
}
