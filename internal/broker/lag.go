package broker

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/lag"
	"github.com/muster-io/muster/internal/server"
)

// coordMeta is the request identity of the broker's own reads of the coordinator.
var coordMeta = coordinator.Meta{APIVersion: 8}

// lagSource reads groups and committed offsets through the coordinator's adapters (ListGroups,
// OffsetFetch), as a client would.
type lagSource struct{ svc *api.Service }

func (s lagSource) ListGroups(ctx context.Context) ([]lag.GroupInfo, error) {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	resp := s.svc.ListGroups(ctx, coordinator.Meta{APIVersion: 5}, req)
	if resp.ErrorCode != 0 && len(resp.Groups) == 0 {
		return nil, kerr.ErrorForCode(resp.ErrorCode)
	}
	out := make([]lag.GroupInfo, len(resp.Groups))
	for i, g := range resp.Groups {
		out[i] = lag.GroupInfo{ID: g.Group, Type: g.GroupType, State: g.GroupState}
	}
	return out, nil
}

// lagFetchChunk bounds the groups of one OffsetFetch (each group is one shard operation).
const lagFetchChunk = 64

// Committed reads each group's committed offsets from its shard's published version
// (api.Service.PublishedOffsets, in topic and partition order, into one reused slice: a sample
// never holds a copy of every offset), and the groups of a shard that is loading or moving with
// OffsetFetch, a chunk of groups at a time.
func (s lagSource) Committed(ctx context.Context, groups []string, fn func(group string, cs []lag.Committed)) error {
	var cs []lag.Committed
	var rest []string
	for i, g := range groups {
		v, ok := s.svc.PublishedOffsets(g)
		if !ok {
			rest = append(rest, g)
			continue
		}
		cs = cs[:0]
		v.AscendGroup(g, func(topic string, partition int32, offset int64) bool {
			if offset >= 0 {
				cs = append(cs, lag.Committed{Topic: topic, Partition: partition, Offset: offset})
			}
			return true
		})
		if len(cs) > 0 {
			fn(g, cs)
		}
		if i%lagFetchChunk == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	for start := 0; start < len(rest); start += lagFetchChunk {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 8
		for _, g := range rest[start:min(start+lagFetchChunk, len(rest))] {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = g
			req.Groups = append(req.Groups, rg)
		}
		resp := s.svc.OffsetFetch(ctx, coordMeta, req)
		for _, g := range resp.Groups {
			if g.ErrorCode != 0 {
				continue // a shard loading or moving: the group is skipped this sample
			}
			cs = cs[:0]
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode == 0 && p.Offset >= 0 {
						cs = append(cs, lag.Committed{Topic: t.Topic, Partition: p.Partition, Offset: p.Offset})
					}
				}
			}
			if len(cs) > 0 {
				fn(g.Group, cs)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// newLagMonitor builds the lag monitor from the muster.lag.* keys (nil when disabled).
func (b *Broker) newLagMonitor() (*lag.Monitor, error) {
	v := b.opts.Config
	if !v.Bool("muster.lag.enable") {
		return nil, nil
	}
	var re *regexp.Regexp
	if p := v.String("muster.lag.partition.metrics.groups"); p != "" {
		var err error
		if re, err = regexp.Compile("^(?:" + p + ")$"); err != nil {
			return nil, fmt.Errorf("muster.lag.partition.metrics.groups: %w", err)
		}
	}
	t := lag.NewTracker(lag.TrackerConfig{Intervals: int(v.Int("muster.lag.window.commits")),
		MinDistance: v.Ms("muster.lag.min.distance.ms")}, b.plane)
	return lag.NewMonitor(lag.MonitorConfig{Interval: v.Ms("muster.lag.sample.interval.ms"), PartitionMetrics: re},
		t, lagSource{b.svc}, b.plane, b.opts.Clock.Now), nil
}

// observeCommits wraps the OffsetCommit handler: every partition committed without error is a
// commit in its partition's lag window.
func (b *Broker) observeCommits(h server.Handler) server.Handler {
	t := b.lag.Tracker()
	now := b.opts.Clock.Now
	return func(ctx context.Context, r *server.Request) kmsg.Response {
		resp := h(ctx, r)
		req, ok := r.Body.(*kmsg.OffsetCommitRequest)
		cr, ok2 := resp.(*kmsg.OffsetCommitResponse)
		if !ok || !ok2 {
			return resp
		}
		at := now()
		for i, rt := range cr.Topics {
			if i >= len(req.Topics) {
				break
			}
			name := req.Topics[i].Topic
			if name == "" { // v10+ names topics by id
				info, ok := b.plane.TopicByID(req.Topics[i].TopicID)
				if !ok {
					continue
				}
				name = info.Name
			}
			for j, rp := range rt.Partitions {
				if rp.ErrorCode != 0 || j >= len(req.Topics[i].Partitions) {
					continue
				}
				t.Observe(req.Group, name, rp.Partition, req.Topics[i].Partitions[j].Offset, at)
			}
		}
		return resp
	}
}

// lagCollector exports the latest lag snapshot: per group always, per partition for the groups
// muster.lag.partition.metrics.groups selects (the cardinality guard).
type lagCollector struct{ b *Broker }

var (
	descGroupLagStatus  = prometheus.NewDesc("muster_group_lag_status", "Burrow's status of the group's lag (1 for the current status: OK, WARNING or ERROR).", []string{"group", "status"}, nil)
	descGroupTotalLag   = prometheus.NewDesc("muster_group_lag_total", "Sum of the group's partition lags (records).", []string{"group"}, nil)
	descGroupMaxLag     = prometheus.NewDesc("muster_group_lag_max", "Largest partition lag of the group (records).", []string{"group"}, nil)
	descGroupMaxTimeLag = prometheus.NewDesc("muster_group_lag_max_seconds", "Largest time lag of the group's partitions: age of the oldest unconsumed record's batch.", []string{"group"}, nil)
	descGroupPartitions = prometheus.NewDesc("muster_group_lag_partitions", "Partitions with committed offsets of the group.", []string{"group"}, nil)
	descPartLag         = prometheus.NewDesc("muster_group_partition_lag", "Partition lag (records), for groups selected by muster.lag.partition.metrics.groups.", []string{"group", "topic", "partition"}, nil)
	descPartTimeLag     = prometheus.NewDesc("muster_group_partition_lag_seconds", "Partition time lag (age of the first unconsumed record's batch).", []string{"group", "topic", "partition"}, nil)
	descPartCommitted   = prometheus.NewDesc("muster_group_partition_committed_offset", "Committed offset.", []string{"group", "topic", "partition"}, nil)
	descPartEnd         = prometheus.NewDesc("muster_group_partition_log_end_offset", "Log end offset (high watermark).", []string{"group", "topic", "partition"}, nil)
	descPartStatus      = prometheus.NewDesc("muster_group_partition_lag_status", "Burrow's status of the partition (1 for the current status: OK, WARNING, STOP, STALL or REWIND).", []string{"group", "topic", "partition", "status"}, nil)
	descLagSampleAge    = prometheus.NewDesc("muster_lag_sample_timestamp_seconds", "When the lag snapshot these series come from was taken (Unix time).", nil, nil)
)

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descGroupLagStatus, descGroupTotalLag, descGroupMaxLag, descGroupMaxTimeLag, descGroupPartitions,
		descPartLag, descPartTimeLag, descPartCommitted, descPartEnd, descPartStatus, descLagSampleAge} {
		ch <- d
	}
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.b.lagMonitor()
	if m == nil {
		return // off, or the broker is still starting
	}
	snap := m.Snapshot()
	if !snap.At.IsZero() {
		ch <- prometheus.MustNewConstMetric(descLagSampleAge, prometheus.GaugeValue, float64(snap.At.UnixMilli())/1000)
	}
	re := m.Config().PartitionMetrics
	for _, id := range snap.Order {
		g := snap.Groups[id]
		ch <- prometheus.MustNewConstMetric(descGroupLagStatus, prometheus.GaugeValue, 1, id, g.Status.String())
		ch <- prometheus.MustNewConstMetric(descGroupTotalLag, prometheus.GaugeValue, float64(g.TotalLag), id)
		ch <- prometheus.MustNewConstMetric(descGroupMaxLag, prometheus.GaugeValue, float64(g.MaxLag), id)
		ch <- prometheus.MustNewConstMetric(descGroupMaxTimeLag, prometheus.GaugeValue, float64(max(g.MaxTimeLagMs, 0))/1000, id)
		ch <- prometheus.MustNewConstMetric(descGroupPartitions, prometheus.GaugeValue, float64(g.Partitions), id)
		if re == nil || !re.MatchString(id) {
			continue
		}
		for _, p := range snap.MetricPartitions(id) {
			part := strconv.Itoa(int(p.Partition))
			ch <- prometheus.MustNewConstMetric(descPartCommitted, prometheus.GaugeValue, float64(p.CommittedOffset), id, p.Topic, part)
			ch <- prometheus.MustNewConstMetric(descPartStatus, prometheus.GaugeValue, 1, id, p.Topic, part, p.Status.String())
			if p.Lag >= 0 {
				ch <- prometheus.MustNewConstMetric(descPartLag, prometheus.GaugeValue, float64(p.Lag), id, p.Topic, part)
				ch <- prometheus.MustNewConstMetric(descPartEnd, prometheus.GaugeValue, float64(p.LogEndOffset), id, p.Topic, part)
			}
			if p.TimeLagMs >= 0 {
				ch <- prometheus.MustNewConstMetric(descPartTimeLag, prometheus.GaugeValue, float64(p.TimeLagMs)/1000, id, p.Topic, part)
			}
		}
	}
}

// runLag samples lag until the broker closes.
func (b *Broker) runLag() {
	ctx, cancel := context.WithCancel(context.Background())
	b.lagStop = cancel
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		// Wait for the shards, so the first sample sees every group.
		for !b.rt.Ready() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		b.lag.Run(ctx)
	}()
}

// lagMonitor is the lag monitor once the broker serves (nil before, or when off).
func (b *Broker) lagMonitor() *lag.Monitor {
	if !b.serving.Load() {
		return nil
	}
	return b.lag
}
