package console

import "github.com/muster-io/muster/internal/lag"

// The JSON API's types (/api/v1); the console pages render the same values.

// Overview is the console's front page: the broker's health, groups by type and state, topics
// and lag statuses.
type Overview struct {
	NodeID  int32          `json:"node_id"`
	Kafka   string         `json:"kafka_listener"`
	Health  string         `json:"health"` // "ok", or what is not ready
	Shards  map[string]int `json:"shards"` // by status: loading, active, failed
	Groups  int            `json:"groups"`
	ByType  []TypeCount    `json:"groups_by_type"`
	Topics  int            `json:"topics"`
	Lag     map[string]int `json:"lag_statuses,omitempty"` // groups by lag status
	LagAt   string         `json:"lag_evaluated_at,omitempty"`
	Version string         `json:"version,omitempty"`
}

// TypeCount is the groups of one type by state.
type TypeCount struct {
	Type    string         `json:"type"`
	Total   int            `json:"total"`
	ByState map[string]int `json:"by_state"`
}

// Page is the paging of a list: 1-based page number, page size and the total count.
type Page struct {
	Page  int `json:"page"`
	Size  int `json:"size"`
	Total int `json:"total"`
	Pages int `json:"pages"`
}

func newPage(page, size, total int) Page {
	pages := (total + size - 1) / size
	if pages == 0 {
		pages = 1
	}
	return Page{Page: page, Size: size, Total: total, Pages: pages}
}

// bounds returns the [lo, hi) slice bounds of the page.
func (p Page) bounds() (int, int) {
	lo := (p.Page - 1) * p.Size
	if lo > p.Total {
		lo = p.Total
	}
	return lo, min(lo+p.Size, p.Total)
}

// GroupList is a page of groups.
type GroupList struct {
	Page   Page           `json:"paging"`
	Groups []GroupSummary `json:"groups"`
}

// GroupSummary is one group in a list.
type GroupSummary struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	LagStatus    string `json:"lag_status,omitempty"`
	TotalLag     int64  `json:"total_lag"`
}

// Group describes one group of any type; the members are one page of them.
type Group struct {
	Group string `json:"group"`
	Type  string `json:"type"` // classic, consumer, streams
	State string `json:"state"`
	// Epoch is the group epoch (consumer, streams); AssignmentEpoch the target assignment's.
	Epoch           int32  `json:"group_epoch"`
	AssignmentEpoch int32  `json:"assignment_epoch"`
	Assignor        string `json:"assignor,omitempty"`
	// ProtocolType and Protocol are a classic group's.
	ProtocolType string `json:"protocol_type,omitempty"`
	Protocol     string `json:"protocol,omitempty"`
	// TopologyEpoch is a streams group's topology epoch (-1 without a topology).
	TopologyEpoch int32    `json:"topology_epoch"`
	Page          Page     `json:"members_paging"`
	Members       []Member `json:"members"`
	// Processes groups a streams group's members by process id (this page's members).
	Processes []Process `json:"processes,omitempty"`
	// Subtopologies are a streams group's configured subtopologies.
	Subtopologies []Subtopology `json:"subtopologies,omitempty"`
}

// Member is one member of a group.
type Member struct {
	MemberID    string `json:"member_id"`
	InstanceID  string `json:"instance_id,omitempty"`
	ClientID    string `json:"client_id"`
	ClientHost  string `json:"client_host"`
	Rack        string `json:"rack,omitempty"`
	MemberEpoch int32  `json:"member_epoch"`
	// Protocol is "classic" or "consumer" (consumer groups), "streams" or "classic".
	Protocol string `json:"protocol,omitempty"`
	// Reconciled is true when the member's assignment is its target and its epoch the
	// group's assignment epoch.
	Reconciled       bool     `json:"reconciled"`
	SubscribedTopics []string `json:"subscribed_topics,omitempty"`
	SubscribedRegex  string   `json:"subscribed_regex,omitempty"`
	// Owned is what the member holds now, Target what the assignor gave it (consumer
	// groups; a classic group's members have only their synced assignment in Owned).
	Owned  []TopicPartitions `json:"owned"`
	Target []TopicPartitions `json:"target,omitempty"`
	// Streams members.
	ProcessID     string `json:"process_id,omitempty"`
	TopologyEpoch int32  `json:"topology_epoch,omitempty"`
	Endpoint      string `json:"endpoint,omitempty"` // Interactive Queries host:port
	Active        []Task `json:"active_tasks,omitempty"`
	Standby       []Task `json:"standby_tasks,omitempty"`
	Warmup        []Task `json:"warmup_tasks,omitempty"`
	TargetActive  []Task `json:"target_active_tasks,omitempty"`
	TargetStandby []Task `json:"target_standby_tasks,omitempty"`
	TargetWarmup  []Task `json:"target_warmup_tasks,omitempty"`
	// Status is what the console makes of the member: Stable, Reconciling, or (streams)
	// "Stale topology" when its topology epoch is behind the group's.
	Status string `json:"status"`
}

// TopicPartitions is partitions of one topic.
type TopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// Task is a streams task set: partitions of one subtopology.
type Task struct {
	Subtopology string  `json:"subtopology"`
	Partitions  []int32 `json:"partitions"`
}

// Process is one Kafka Streams instance: its members (threads) and their tasks.
type Process struct {
	ProcessID string   `json:"process_id"`
	Members   []string `json:"members"`
	Endpoint  string   `json:"endpoint,omitempty"`
	Active    int      `json:"active_tasks"`
	Standby   int      `json:"standby_tasks"`
	Warmup    int      `json:"warmup_tasks"`
}

// Subtopology is a configured subtopology of a streams group.
type Subtopology struct {
	ID           string   `json:"subtopology"`
	SourceTopics []string `json:"source_topics"`
	Partitions   int32    `json:"partitions"`
}

// Offsets is one page of a group's committed offsets with their lag.
type Offsets struct {
	Group string `json:"group"`
	Page  Page   `json:"paging"`
	// Status is the group's lag status (from the latest lag sample; "" when lag monitoring
	// is off or the group has not been sampled yet).
	Status     string           `json:"lag_status,omitempty"`
	TotalLag   int64            `json:"total_lag"`
	Partitions []PartitionLag   `json:"partitions"`
	Chart      []lag.ChartPoint `json:"chart,omitempty"`
}

// PartitionLag is one committed partition, read now.
type PartitionLag struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	LogEndOffset    int64  `json:"log_end_offset"`
	Lag             int64  `json:"lag"`
	TimeLagMs       int64  `json:"time_lag_ms"`
	Metadata        string `json:"metadata,omitempty"`
	// Status is Burrow's status from the latest lag sample ("" when not sampled).
	Status string `json:"status,omitempty"`
	// Owner is the member the partition is assigned to ("" when none).
	Owner string `json:"owner,omitempty"`
	// Window is the partition's commit window (lag status API only).
	Window []lag.Observation `json:"window,omitempty"`
}

// LagStatus is a group's lag evaluation (GET /api/v1/groups/{g}/lag), one page of partitions.
type LagStatus struct {
	Group        string         `json:"group"`
	EvaluatedAt  string         `json:"evaluated_at"`
	Status       lag.Status     `json:"status"`
	TotalLag     int64          `json:"total_lag"`
	MaxLag       int64          `json:"max_lag"`
	MaxLagTopic  string         `json:"max_lag_topic,omitempty"`
	MaxLagPart   int32          `json:"max_lag_partition"`
	MaxTimeLagMs int64          `json:"max_time_lag_ms"`
	Complete     float64        `json:"complete"`
	Page         Page           `json:"paging"`
	Partitions   []LagPartition `json:"partitions"`
}

// LagPartition is one partition's lag evaluation with its commit window.
type LagPartition struct {
	lag.PartitionLag
	Window []lag.Observation `json:"window"`
}

// TopicList is a page of topics.
type TopicList struct {
	Page   Page           `json:"paging"`
	Topics []TopicSummary `json:"topics"`
}

// TopicSummary is one topic in a list.
type TopicSummary struct {
	Name       string  `json:"name"`
	ID         string  `json:"id"`
	Partitions int32   `json:"partitions"`
	Internal   bool    `json:"internal"`
	Messages   int64   `json:"messages"` // sum of high watermark − log start
	Bytes      int64   `json:"bytes"`
	Rate       float64 `json:"produce_rate"` // records per second, over the last samples
}

// Topic is one topic with its partitions.
type Topic struct {
	TopicSummary
	Configs    map[string]string `json:"configs,omitempty"`
	Page       Page              `json:"paging"`
	Partitions []TopicPartition  `json:"partition_stats"`
}

// TopicPartition is one partition of a topic.
type TopicPartition struct {
	Partition     int32   `json:"partition"`
	LogStart      int64   `json:"log_start_offset"`
	HighWatermark int64   `json:"high_watermark"`
	Bytes         int64   `json:"bytes"`
	Segments      int     `json:"segments"`
	Rate          float64 `json:"produce_rate"`
}

// APIError is the body of every non-2xx API answer.
type APIError struct {
	Error string `json:"error"`
}
