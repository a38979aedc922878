package broker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/muster-io/muster/internal/coordinator"
)

// Share-partition metrics (KIP-932; Kafka's ShareGroupMetrics and SharePartitionMetrics,
// KIP-1103), summed over the coordinator shards that own the share-partitions.
var (
	descShareAcquired = prometheus.NewDesc("muster_share_records_acquired_total",
		"Records acquired by share group members (deliveries).", nil, nil)
	descShareRedelivered = prometheus.NewDesc("muster_share_records_redelivered_total",
		"Acquisitions of records delivered before (delivery count above 1).", nil, nil)
	descShareAcks = prometheus.NewDesc("muster_share_record_acknowledgements_total",
		"Records acknowledged, by acknowledge type (Kafka RecordAcknowledgementsPerSec{ackType}).", []string{"ack_type"}, nil)
	descShareArchived = prometheus.NewDesc("muster_share_records_archived_total",
		"Records archived after their last delivery (share.delivery.count.limit).", nil, nil)
	descShareLockTimeouts = prometheus.NewDesc("muster_share_acquisition_lock_timeouts_total",
		"Acquired records whose acquisition lock expired (Kafka AcquisitionLockTimeoutPerSec).", nil, nil)
	descShareSessions = prometheus.NewDesc("muster_share_sessions",
		"Open share sessions (Kafka ShareSessionCache ShareSessionsCount).", nil, nil)
)

func describeShare(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descShareAcquired, descShareRedelivered, descShareAcks, descShareArchived, descShareLockTimeouts, descShareSessions} {
		ch <- d
	}
}

func addShareMetrics(sum, m *coordinator.ShareMetrics) {
	sum.ShareAcquiredRecords += m.ShareAcquiredRecords
	sum.ShareRedeliveries += m.ShareRedeliveries
	sum.ShareAccepted += m.ShareAccepted
	sum.ShareReleased += m.ShareReleased
	sum.ShareRejected += m.ShareRejected
	sum.ShareGaps += m.ShareGaps
	sum.ShareRenewed += m.ShareRenewed
	sum.ShareArchivedRecords += m.ShareArchivedRecords
	sum.ShareLockExpiries += m.ShareLockExpiries
	sum.ShareRebalances += m.ShareRebalances
}

func collectShare(ch chan<- prometheus.Metric, m *coordinator.ShareMetrics, sessions int) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(descShareAcquired, m.ShareAcquiredRecords)
	counter(descShareRedelivered, m.ShareRedeliveries)
	counter(descShareAcks, m.ShareAccepted, "accept")
	counter(descShareAcks, m.ShareReleased, "release")
	counter(descShareAcks, m.ShareRejected, "reject")
	counter(descShareAcks, m.ShareGaps, "gap")
	counter(descShareAcks, m.ShareRenewed, "renew")
	counter(descShareArchived, m.ShareArchivedRecords)
	counter(descShareLockTimeouts, m.ShareLockExpiries)
	ch <- prometheus.MustNewConstMetric(descShareSessions, prometheus.GaugeValue, float64(sessions))
}
