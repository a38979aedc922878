package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/testutil"
)

func set(name, value string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: kadm.StringPtr(value)}
}

func del(name string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.DeleteConfig, Name: name} }

// topicConfig describes one config of a topic.
func topicConfig(t *testing.T, ctx context.Context, adm *kadm.Client, topic, name string) kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("%s has no config %s", topic, name)
	return kadm.Config{}
}

// alterT checks kadm alter results: res returns the one resource's error and message.
type alterT struct{ t *testing.T }

func (a alterT) res(rs kadm.AlterConfigsResponses, err error) (error, string) {
	t := a.t
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("responses %+v", rs)
	}
	return rs[0].Err, rs[0].ErrMessage
}

// TestAlterTopicConfigs: IncrementalAlterConfigs (kadm AlterTopicConfigs) and AlterConfigs
// (AlterTopicConfigsState) change a topic's configs durably and live: a shorter retention.ms
// deletes old records at the next check; bad values, unknown names and unknown topics get
// Kafka's error codes and messages; validateOnly changes nothing; DescribeConfigs reports the
// override's source and the broker default behind it.
func TestAlterTopicConfigs(t *testing.T) {
	a := alterT{t}
	b := testutil.Start(t, "log.retention.check.interval.ms=20")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("events"))
	for i := 0; i < 5; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("old"), Timestamp: time.Now().Add(-time.Hour)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("new")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Defaults first: retention.ms comes from the broker (log.retention.hours=168).
	c := topicConfig(t, ctx, adm, "events", "retention.ms")
	if c.MaybeValue() != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("default retention.ms %+v", c)
	}
	if c := topicConfig(t, ctx, adm, "events", "segment.bytes"); c.Source != kmsg.ConfigSourceDefaultConfig ||
		len(c.Synonyms) != 1 || c.Synonyms[0].Key != "log.segment.bytes" {
		t.Fatalf("segment.bytes %+v", c)
	}

	// validateOnly changes nothing.
	if err, _ := a.res(adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "60000")}, "events")); err != nil {
		t.Fatal(err)
	}
	if c := topicConfig(t, ctx, adm, "events", "retention.ms"); c.MaybeValue() != "604800000" {
		t.Fatalf("validate-only changed retention.ms to %s", c.MaybeValue())
	}

	// Errors, with Kafka's codes and messages; the resource stays unchanged.
	for _, tc := range []struct {
		cfgs  []kadm.AlterConfig
		topic string
		code  *kerr.Error
		msg   string
	}{
		{[]kadm.AlterConfig{set("retention.ms", "soon")}, "events", kerr.InvalidConfig, "Invalid value soon for configuration retention.ms: Not a number of type LONG"},
		{[]kadm.AlterConfig{set("segment.bytes", "1000")}, "events", kerr.InvalidConfig, "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"},
		{[]kadm.AlterConfig{set("cleanup.policy", "shred")}, "events", kerr.InvalidConfig, "Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete"},
		{[]kadm.AlterConfig{set("retention.ms", "1"), set("flavour", "x")}, "events", kerr.InvalidConfig, "Unknown topic config name: flavour"},
		{[]kadm.AlterConfig{set("retention.ms", "1")}, "nosuch", kerr.UnknownTopicOrPartition, "The topic 'nosuch' does not exist."},
		{[]kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "retention.ms", Value: kadm.StringPtr("1")}}, "events", kerr.InvalidConfig, "Can't APPEND to key retention.ms because its type is not LIST."},
	} {
		err, msg := a.res(adm.AlterTopicConfigs(ctx, tc.cfgs, tc.topic))
		if !errors.Is(err, tc.code) || msg != tc.msg {
			t.Errorf("%v on %s: %v %q, want %v %q", tc.cfgs, tc.topic, err, msg, tc.code, tc.msg)
		}
	}

	// Shorten retention: the old records go at the next retention check.
	if err, msg := a.res(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "60000"),
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, "events")); err != nil {
		t.Fatal(err, msg)
	}
	c = topicConfig(t, ctx, adm, "events", "retention.ms")
	if c.MaybeValue() != "60000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig ||
		len(c.Synonyms) != 1 || c.Synonyms[0].Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("altered retention.ms %+v", c)
	}
	if c := topicConfig(t, ctx, adm, "events", "cleanup.policy"); c.MaybeValue() != "delete,compact" {
		t.Fatalf("appended cleanup.policy %q", c.MaybeValue())
	}
	waitFor(t, "retention to apply the new retention.ms", 10*time.Second, func() bool {
		so, err := adm.ListStartOffsets(ctx, "events")
		if err != nil {
			return false
		}
		o, _ := so.Lookup("events", 0)
		return o.Offset == 5
	})

	// The legacy AlterConfigs replaces the whole set: retention.ms goes back to the default.
	if err, msg := a.res(adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{set("max.message.bytes", "2000")}, "events")); err != nil {
		t.Fatal(err, msg)
	}
	if c := topicConfig(t, ctx, adm, "events", "retention.ms"); c.MaybeValue() != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("after AlterConfigs retention.ms %+v", c)
	}
	// max.message.bytes applies to the next produce.
	big := &kgo.Record{Value: []byte(strings.Repeat("x", 3000))}
	if err := newClient(t, b.Addr(), kgo.DefaultProduceTopic("events"), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordRetries(0)).ProduceSync(ctx, big).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("produce above max.message.bytes: %v", err)
	}

	// Overrides survive a restart.
	b = b.Restart()
	adm = kadm.NewClient(newClient(t, b.Addr()))
	if c := topicConfig(t, ctx, adm, "events", "max.message.bytes"); c.MaybeValue() != "2000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("after restart %+v", c)
	}
	// DELETE removes an override.
	if err, msg := a.res(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{del("max.message.bytes")}, "events")); err != nil {
		t.Fatal(err, msg)
	}
	if c := topicConfig(t, ctx, adm, "events", "max.message.bytes"); c.MaybeValue() != "1048588" {
		t.Fatalf("after delete %+v", c)
	}
}

// TestAlterTopicToCompact: switching a topic to cleanup.policy=compact at runtime makes the
// cleaner compact it.
func TestAlterTopicToCompact(t *testing.T) {
	a := alterT{t}
	b := testutil.Start(t, "log.cleaner.backoff.ms=50")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	cfg := map[string]*string{"segment.ms": kadm.StringPtr("50")}
	if r, err := adm.CreateTopic(ctx, 1, 1, cfg, "table"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("table"))
	for i := 0; i < 4; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond)
	}
	if len(readAll(t, ctx, b.Addr(), "table")) != 4 {
		t.Fatal("a delete-policy topic must not be compacted")
	}
	if err, msg := a.res(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("cleanup.policy", "compact")}, "table")); err != nil {
		t.Fatal(err, msg)
	}
	waitFor(t, "the cleaner to compact the topic", 10*time.Second, func() bool {
		return len(readAll(t, ctx, b.Addr(), "table")) == 2 // the latest sealed record and the active segment
	})
}

// TestAlterBrokerConfigs: the BROKER resource takes the keys Kafka marks dynamic, for the
// cluster default ("") or this broker's id; they apply at once to topics without an override
// and DescribeConfigs reports their source and synonyms; read-only keys are refused with
// Kafka's INVALID_REQUEST; the change is durable.
func TestAlterBrokerConfigs(t *testing.T) {
	a := alterT{t}
	b := testutil.Start(t, "log.retention.hours=2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "plain"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if c := topicConfig(t, ctx, adm, "plain", "retention.ms"); c.MaybeValue() != "7200000" {
		t.Fatalf("retention.ms from log.retention.hours: %+v", c)
	}
	err, msg := a.res(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.retention.hours", "1")}))
	if !errors.Is(err, kerr.InvalidRequest) || msg != "Cannot update these configs dynamically: Set(log.retention.hours)" {
		t.Fatalf("read-only key: %v %q", err, msg)
	}
	err, msg = a.res(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.retention.ms", "ten")}))
	if !errors.Is(err, kerr.InvalidRequest) || msg != "Invalid value ten for configuration log.retention.ms: Not a number of type LONG" {
		t.Fatalf("bad value: %v %q", err, msg)
	}
	rc, err := testutil.DialRaw(b.Addr()) // kadm would route a request for broker 7 to broker 7
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ireq := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeBroker, "7"
	ir.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("1")}}
	ireq.Resources = append(ireq.Resources, ir)
	iresp, err := rc.Do(ireq)
	if err != nil {
		t.Fatal(err)
	}
	if r := iresp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != kerr.InvalidRequest.Code ||
		r.ErrorMessage == nil || *r.ErrorMessage != "Unexpected broker id, expected 0, but received 7" {
		t.Fatalf("other broker: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	// The cluster default, then this broker's own value, which wins.
	if err, msg := a.res(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.retention.ms", "600000"), set("log.cleaner.backoff.ms", "500")})); err != nil {
		t.Fatal(err, msg)
	}
	c := topicConfig(t, ctx, adm, "plain", "retention.ms")
	if c.MaybeValue() != "600000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || len(c.Synonyms) != 3 ||
		c.Synonyms[1].Key != "log.retention.hours" || c.Synonyms[1].Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("retention.ms from the dynamic default: %+v", c)
	}
	if err, msg := a.res(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.retention.ms", "300000")}, 0)); err != nil {
		t.Fatal(err, msg)
	}
	if c := topicConfig(t, ctx, adm, "plain", "retention.ms"); c.MaybeValue() != "300000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("retention.ms from this broker's dynamic config: %+v", c)
	}
	// "" lists the dynamic defaults only; the broker lists everything, read-only flags included.
	rcs, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(rcs) != 1 || len(rcs[0].Configs) != 2 {
		t.Fatalf("cluster defaults: %+v %v", rcs, err)
	}
	b = b.Restart()
	adm = kadm.NewClient(newClient(t, b.Addr()))
	if c := topicConfig(t, ctx, adm, "plain", "retention.ms"); c.MaybeValue() != "300000" {
		t.Fatalf("after restart: %+v", c)
	}
	if got := b.Plane().Effective().Int("log.cleaner.backoff.ms"); got != 500 {
		t.Fatalf("cleaner backoff in force: %d", got)
	}
	rcs, err = adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	ro := map[string]bool{}
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeBroker, "0", []string{"log.retention.ms", "num.partitions"}
	req.Resources = append(req.Resources, rr)
	req.IncludeDocumentation = true
	resp, err := req.RequestWith(ctx, newClient(t, b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Resources[0].Configs {
		ro[c.Name] = c.ReadOnly
		if c.Documentation == nil {
			t.Errorf("%s has no documentation", c.Name)
		}
	}
	if ro["log.retention.ms"] || !ro["num.partitions"] || len(rcs[0].Configs) < 50 {
		t.Fatalf("read-only flags %v, %d configs", ro, len(rcs[0].Configs))
	}
}

// groupConfigsRequest alters one GROUP resource with IncrementalAlterConfigs SET operations.
func alterGroup(t *testing.T, ctx context.Context, cl *kgo.Client, group string, validateOnly bool, kvs ...string) kmsg.IncrementalAlterConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i+1 < len(kvs); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kvs[i], kadm.StringPtr(kvs[i+1])
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Resources[0]
}

func describeGroup(t *testing.T, ctx context.Context, cl *kgo.Client, group string) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe group %s: %v %v", group, err, resp)
	}
	out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range resp.Resources[0].Configs {
		out[c.Name] = c
	}
	return out
}

// TestGroupConfigs: GROUP resources take KIP-848's dynamic group configs, bounded by the
// broker's group.* min/max keys, durably; DescribeConfigs reports the override (GROUP_CONFIG)
// or the broker default; the coordinator's subscription sees each change.
func TestGroupConfigs(t *testing.T) {
	b := testutil.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, b.Addr())
	var mu sync.Mutex
	var changes []config.GroupConfigChange
	b.Plane().GroupConfigs().Subscribe(func(c config.GroupConfigChange) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
	})

	cs := describeGroup(t, ctx, cl, "payments")
	if c := cs["consumer.session.timeout.ms"]; *c.Value != "45000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("default %+v", c)
	}
	for _, tc := range []struct {
		kvs []string
		msg string
	}{
		{[]string{"consumer.session.timeout.ms", "5000"}, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."},
		{[]string{"streams.num.standby.replicas", "5"}, "streams.num.standby.replicas must be less than or equal to 2"},
		{[]string{"consumer.heartbeat.interval.ms", "abc"}, "Invalid value abc for configuration consumer.heartbeat.interval.ms: Not a number of type INT"},
		{[]string{"retention.ms", "1"}, "Unknown group config name: retention.ms"},
	} {
		r := alterGroup(t, ctx, cl, "payments", false, tc.kvs...)
		if r.ErrorCode != kerr.InvalidConfig.Code || r.ErrorMessage == nil || *r.ErrorMessage != tc.msg {
			t.Errorf("%v: %v %v, want %q", tc.kvs, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, tc.msg)
		}
	}
	if r := alterGroup(t, ctx, cl, "payments", true, "consumer.session.timeout.ms", "50000"); r.ErrorCode != 0 {
		t.Fatalf("validate only: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if _, ok := b.Plane().GroupConfigs().Get("payments"); ok {
		t.Fatal("validate-only stored the config")
	}
	if r := alterGroup(t, ctx, cl, "payments", false, "consumer.session.timeout.ms", "50000", "streams.num.standby.replicas", "1"); r.ErrorCode != 0 {
		t.Fatalf("alter: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	cs = describeGroup(t, ctx, cl, "payments")
	if c := cs["consumer.session.timeout.ms"]; *c.Value != "50000" || c.Source != kmsg.ConfigSourceGroupConfig {
		t.Fatalf("override %+v", c)
	}
	mu.Lock()
	if len(changes) != 1 || changes[0].Group != "payments" {
		t.Fatalf("subscription saw %+v", changes)
	}
	mu.Unlock()
	b = b.Restart()
	g, ok := b.Plane().GroupConfigs().Get("payments")
	if !ok || g.ConsumerSessionTimeout(b.Plane().Effective()) != 50*time.Second || g.StreamsNumStandbyReplicas(b.Plane().Effective()) != 1 {
		t.Fatalf("after restart: %+v", g.Overrides())
	}
}
