package data

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
)

func incr(typ kmsg.ConfigResourceType, name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = typ, name, ops
	req.Resources = append(req.Resources, r)
	return req
}

func op(name string, o kmsg.IncrementalAlterConfigOp, v *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: o, Value: v}
}

// The request-level checks of Kafka's ConfigAdminManager: duplicate resources and keys, null
// values, unknown operations and resource types are INVALID_REQUEST with Kafka's messages.
func TestAlterConfigsRequestChecks(t *testing.T) {
	e := newCompactEnv(t)
	e.createTopic("t", 1, nil)
	set := kmsg.IncrementalAlterConfigOpSet
	cases := []struct {
		req  *kmsg.IncrementalAlterConfigsRequest
		code *kerr.Error
		msg  string
	}{
		{incr(kmsg.ConfigResourceTypeTopic, "t", op("retention.ms", set, strp("1")), op("retention.ms", set, strp("2"))), kerr.InvalidRequest, "Error due to duplicate config keys"},
		{incr(kmsg.ConfigResourceTypeTopic, "t", op("retention.ms", set, nil)), kerr.InvalidRequest, "Null value not supported for : retention.ms"},
		{incr(kmsg.ConfigResourceTypeTopic, "t", op("retention.ms", 9, strp("1"))), kerr.InvalidRequest, "Unknown operations type 9"},
		{incr(kmsg.ConfigResourceTypeBrokerLogger, "1", op("x", set, strp("1"))), kerr.InvalidRequest, "Unknown resource type 8"},
		{incr(kmsg.ConfigResourceTypeTopic, "", op("retention.ms", set, strp("1"))), kerr.InvalidRequest, "Default topic resources are not allowed."},
		{incr(kmsg.ConfigResourceTypeGroupConfig, "", op("consumer.session.timeout.ms", set, strp("50000"))), kerr.InvalidRequest, "Default group resources are not allowed."},
		{incr(kmsg.ConfigResourceTypeBroker, "x", op("log.retention.ms", set, strp("1"))), kerr.InvalidRequest, "Node id must be an integer, but it is: x"},
		{incr(kmsg.ConfigResourceTypeBroker, "", op("log.cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, strp("compact")), op("log.retention.ms", kmsg.IncrementalAlterConfigOpAppend, strp("1"))), kerr.InvalidConfig, "Config value append is not allowed for config key: log.retention.ms"},
		{incr(kmsg.ConfigResourceTypeBroker, "", op("fancy.key", set, strp("1"))), kerr.InvalidConfig, "Unknown broker config name: fancy.key"},
		{incr(kmsg.ConfigResourceTypeBroker, "", op("log.cleaner.min.compaction.lag.ms", set, strp("10")), op("log.cleaner.max.compaction.lag.ms", set, strp("5"))), kerr.InvalidRequest, "log.cleaner.min.compaction.lag.ms=10 must not exceed log.cleaner.max.compaction.lag.ms=5"},
	}
	for i, c := range cases {
		r := e.p.IncrementalAlterConfigs(e.ctx, c.req).Resources[0]
		if r.ErrorCode != c.code.Code || r.ErrorMessage == nil || *r.ErrorMessage != c.msg {
			t.Errorf("case %d: %v %v, want %v %q", i, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, c.code, c.msg)
		}
	}
	// A resource listed twice fails both times.
	req := incr(kmsg.ConfigResourceTypeTopic, "t", op("retention.ms", set, strp("1")))
	req.Resources = append(req.Resources, req.Resources[0])
	for _, r := range e.p.IncrementalAlterConfigs(e.ctx, req).Resources {
		if r.ErrorCode != kerr.InvalidRequest.Code || *r.ErrorMessage != "Each resource must appear at most once." {
			t.Errorf("duplicate resource: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
		}
	}
	// APPEND and SUBTRACT on a list: cleanup.policy starts from its default.
	r := e.p.IncrementalAlterConfigs(e.ctx, incr(kmsg.ConfigResourceTypeTopic, "t",
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, strp("compact")))).Resources[0]
	if r.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(r.ErrorCode))
	}
	e.p.IncrementalAlterConfigs(e.ctx, incr(kmsg.ConfigResourceTypeTopic, "t",
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpSubtract, strp("delete"))))
	if ti, _ := e.p.Topic("t"); ti.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("cleanup.policy %q", ti.Configs["cleanup.policy"])
	}
	if lc := e.topicLC("t"); !lc.compact || lc.delete {
		t.Fatal("the topic's log config must follow")
	}
}

func (e *env) topicLC(name string) *logConfig {
	t, _ := e.p.lookup(name)
	return t.logConfig()
}

// A group's configs are removed with Delete (what DeleteGroups calls), durably, and the
// subscribers hear of it.
func TestGroupConfigStoreDelete(t *testing.T) {
	e := newCompactEnv(t)
	r := e.p.IncrementalAlterConfigs(e.ctx, incr(kmsg.ConfigResourceTypeGroupConfig, "g",
		op("streams.num.standby.replicas", kmsg.IncrementalAlterConfigOpSet, strp("2")))).Resources[0]
	if r.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	var seen []config.GroupConfigChange
	e.p.GroupConfigs().Subscribe(func(c config.GroupConfigChange) { seen = append(seen, c) })
	if err := e.p.GroupConfigs().Delete("g"); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !seen[0].Config.Empty() {
		t.Fatalf("changes %+v", seen)
	}
	e.restart()
	if _, ok := e.p.GroupConfigs().Get("g"); ok {
		t.Fatal("deleted group configs came back")
	}
}
