package broker

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/wire"
)

// requestMetrics are Kafka's RequestMetrics (kafka.network:type=RequestMetrics) in Prometheus
// form, per API key: requests by version (RequestsPerSec), responses sent, error codes in the
// responses (ErrorsPerSec, NONE included, one per partition or group where the response has
// one each), and the latency histograms RequestQueueTimeMs (read → handler start, i.e. waiting
// behind the connection's earlier ordered requests), LocalTimeMs (the handler) and TotalTimeMs
// (read → response written). Everything a request touches is resolved when the broker starts,
// so the hot path is a few atomic adds and three histogram observations.
type requestMetrics struct {
	byKey [128]*apiRequestMetrics

	requests  *prometheus.CounterVec
	responses *prometheus.CounterVec
	queue     *prometheus.HistogramVec
	local     *prometheus.HistogramVec
	total     *prometheus.HistogramVec
}

// errCodeSlots covers Kafka's error codes -1 (UNKNOWN_SERVER_ERROR) to 254; rarer codes are
// counted under "other".
const errCodeSlots = 256

type apiRequestMetrics struct {
	name       string
	minVersion int16
	byVersion  []prometheus.Counter
	responses  prometheus.Counter
	queue      prometheus.Observer
	local      prometheus.Observer
	total      prometheus.Observer
	errors     [errCodeSlots]atomic.Int64 // by code+1
	otherErrs  atomic.Int64
}

var descRequestErrors = prometheus.NewDesc("muster_request_errors_total",
	"Error codes in responses by request and error name, NONE included (Kafka RequestMetrics ErrorsPerSec): one per code a response carries, e.g. per partition of an OffsetCommit.",
	[]string{"request", "error"}, nil)

// requestLatencyBuckets span 25 µs to about 3.3 s (seconds, doubling).
var requestLatencyBuckets = prometheus.ExponentialBuckets(0.000025, 2, 18)

func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "muster_requests_received_total",
			Help: "Requests received, by request name and version (Kafka RequestMetrics RequestsPerSec).",
		}, []string{"request", "version"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "muster_responses_sent_total",
			Help: "Responses written, by request name (a Produce with acks=0 gets none).",
		}, []string{"request"}),
		queue: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "muster_request_queue_time_seconds",
			Help:    "Time from reading a request to starting its handler (Kafka RequestQueueTimeMs): waiting behind earlier ordered requests of the connection.",
			Buckets: requestLatencyBuckets,
		}, []string{"request"}),
		local: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "muster_request_local_time_seconds",
			Help:    "Time the handler took (Kafka LocalTimeMs; for coordinator writes it includes the durable commit).",
			Buckets: requestLatencyBuckets,
		}, []string{"request"}),
		total: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "muster_request_total_time_seconds",
			Help:    "Time from reading a request to writing its response (Kafka TotalTimeMs).",
			Buckets: requestLatencyBuckets,
		}, []string{"request"}),
	}
	for _, a := range wire.Supported {
		am := &apiRequestMetrics{name: a.Name, minVersion: a.Accepted.Min,
			responses: m.responses.WithLabelValues(a.Name),
			queue:     m.queue.WithLabelValues(a.Name),
			local:     m.local.WithLabelValues(a.Name),
			total:     m.total.WithLabelValues(a.Name),
		}
		for v := a.Accepted.Min; v <= a.Accepted.Max; v++ {
			am.byVersion = append(am.byVersion, m.requests.WithLabelValues(a.Name, strconv.Itoa(int(v))))
		}
		if a.Key >= 0 && int(a.Key) < len(m.byKey) {
			m.byKey[a.Key] = am
		}
	}
	return m
}

// ObserveRequest implements server.RequestObserver.
func (m *requestMetrics) ObserveRequest(t server.RequestTiming) {
	if t.Key < 0 || int(t.Key) >= len(m.byKey) {
		return
	}
	am := m.byKey[t.Key]
	if am == nil {
		return
	}
	if i := int(t.Version - am.minVersion); i >= 0 && i < len(am.byVersion) {
		am.byVersion[i].Inc()
	}
	if t.Response != nil {
		am.responses.Inc()
		wire.ErrorCodes(t.Response, am.countError)
	}
	if t.Received == 0 {
		return
	}
	if t.Started != 0 {
		am.queue.Observe((t.Started - t.Received).Seconds())
		if t.Finished != 0 {
			am.local.Observe((t.Finished - t.Started).Seconds())
		}
	}
	am.total.Observe((t.Sent - t.Received).Seconds())
}

func (am *apiRequestMetrics) countError(code int16, n int) {
	if i := int(code) + 1; i >= 0 && i < errCodeSlots {
		am.errors[i].Add(int64(n))
		return
	}
	am.otherErrs.Add(int64(n))
}

// Describe implements prometheus.Collector.
func (m *requestMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.responses.Describe(ch)
	m.queue.Describe(ch)
	m.local.Describe(ch)
	m.total.Describe(ch)
	ch <- descRequestErrors
}

// Collect implements prometheus.Collector: error counts are exported once seen.
func (m *requestMetrics) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.responses.Collect(ch)
	m.queue.Collect(ch)
	m.local.Collect(ch)
	m.total.Collect(ch)
	for _, am := range m.byKey {
		if am == nil {
			continue
		}
		for i := range am.errors {
			if n := am.errors[i].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(descRequestErrors, prometheus.CounterValue, float64(n), am.name, errorName(int16(i-1)))
			}
		}
		if n := am.otherErrs.Load(); n > 0 {
			ch <- prometheus.MustNewConstMetric(descRequestErrors, prometheus.CounterValue, float64(n), am.name, "OTHER")
		}
	}
}

// errorName is Kafka's Errors enum name of a code (NONE for 0).
func errorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.TypedErrorForCode(code); e != nil {
		return e.Message
	}
	return "CODE_" + strconv.Itoa(int(code))
}
