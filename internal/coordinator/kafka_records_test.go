package coordinator

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Golden bytes of the records muster writes to __consumer_offsets, written out field by field
// from Kafka 4.3's group-coordinator schemas (value version 0, flexible: compact strings and
// arrays are length+1 as an unsigned varint, every struct ends with its tagged fields, tagged
// fields only when not at their default).
func TestKafkaRecordGoldenBytes(t *testing.T) {
	h := func(parts ...string) string { return strings.Join(parts, "") }
	// cs is a compact string; uv a one-byte unsigned varint.
	cs := func(s string) string {
		return hex.EncodeToString([]byte{byte(len(s) + 1)}) + hex.EncodeToString([]byte(s))
	}
	uv := func(n int) string { return hex.EncodeToString([]byte{byte(n)}) }
	t1 := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	uuid := hex.EncodeToString(t1[:])
	check := func(name string, key, value []byte, want string) {
		t.Helper()
		k, v, err := KafkaRecord(key, value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(k) != string(key) {
			t.Errorf("%s: key changed", name)
		}
		if g := hex.EncodeToString(v); g != want {
			t.Errorf("%s =\n%s\nwant\n%s", name, g, want)
		}
	}

	// Consumer groups.
	check("ConsumerGroupMetadataValue, hash as tag 0", cgMetadataKey("g"), cgMetadataValue(7, 0x0102030405060708),
		h("0000", "00000007", "01", "00", "08", "0102030405060708"))
	check("ConsumerGroupMetadataValue, no hash", cgMetadataKey("g"), cgMetadataValue(7, 0),
		h("0000", "00000007", "00"))
	inst := "i"
	m := &consumerMember{id: "m", instanceID: &inst, clientID: "c", clientHost: "/h",
		subscribedNames: []string{"a", "b"}, rebalanceTimeout: 300}
	check("ConsumerGroupMemberMetadataValue, consumer protocol", cgMemberKey("g", "m"), cgMemberValue(m),
		h("0000", cs("i"), "00", cs("c"), cs("/h"), uv(3), cs("a"), cs("b"), "00", "0000012c", "00", "00"))
	m.subscribedNames, m.subscribedRegex, m.serverAssignor = nil, "t.*", "uniform"
	m.classic = &cgClassicMeta{sessionTimeout: 45000, protocols: []classicProtocol{{Name: "range", Metadata: []byte{9}}}}
	classic := h("0000afc8", uv(2), cs("range"), uv(2), "09", "00", "00")
	check("ConsumerGroupMemberMetadataValue, classic member", cgMemberKey("g", "m"), cgMemberValue(m),
		h("0000", cs("i"), "00", cs("c"), cs("/h"), uv(1), cs("t.*"), "0000012c", cs("uniform"),
			"01", "00", uv(len(classic)/2), classic))
	check("ConsumerGroupTargetAssignmentMetadataValue", cgTargetMetaKey("g"), cgTargetMetaValue(5), h("0000", "00000005", "00"))
	a := topicPartitions{t1: {0, 2}}
	check("ConsumerGroupTargetAssignmentMemberValue", cgTargetMemberKey("g", "m"), cgTargetMemberValue(a),
		h("0000", uv(2), uuid, uv(3), "00000000", "00000002", "00", "00"))
	c := &consumerCurrent{epoch: 5, prevEpoch: 4, state: 1, assigned: a, pending: topicPartitions{}}
	check("ConsumerGroupCurrentMemberAssignmentValue, no assignment epochs", cgCurrentKey("g", "m"), cgCurrentValue(c),
		h("0000", "00000005", "00000004", "01", uv(2), uuid, uv(3), "00000000", "00000002", "00", uv(1), "00"))
	c.epochs = assignmentEpochsAt(a, 3)
	c.epochs.set(t1, 2, 5)
	epochs := h(uv(3), "00000003", "00000005")
	check("ConsumerGroupCurrentMemberAssignmentValue, KIP-1251 epochs as tag 0", cgCurrentKey("g", "m"), cgCurrentValue(c),
		h("0000", "00000005", "00000004", "01", uv(2), uuid, uv(3), "00000000", "00000002",
			"01", "00", uv(len(epochs)/2), epochs, uv(1), "00"))
	check("ConsumerGroupRegularExpressionValue", cgRegexKey("g", "t.*"), cgRegexValue(&consumerRegex{topics: []string{"ta"}, version: 2, timestamp: 3}),
		h("0000", uv(2), cs("ta"), "0000000000000002", "0000000000000003", "00"))

	// Streams groups. The metadata bytes are those of Kafka 4.3.1's generated writer for a
	// group bump record (validated topology epoch 0, num.standby.replicas 0).
	sm := &streamsMetadataValue{Epoch: 7, MetadataHash: 0x0102030405060708, ValidatedTopologyEpoch: 0,
		LastAssignmentConfigs: map[string]string{"num.standby.replicas": "0"}, StoredTopologyEpoch: -1, LastFailedTopologyEpoch: -1}
	check("StreamsGroupMetadataValue", groupKey(RecStreamsGroupMetadata, "g"), encodeStreamsMetadata(sm),
		"0000"+"00000007"+"0102030405060708"+"02"+"0004"+"00000000"+"0119"+"02"+"15"+hex.EncodeToString([]byte("num.standby.replicas"))+"0230"+"00")
	sm.ValidatedTopologyEpoch, sm.LastAssignmentConfigs, sm.StoredTopologyEpoch = -1, nil, 4
	check("StreamsGroupMetadataValue, KIP-1331 stored epoch as tag 2", groupKey(RecStreamsGroupMetadata, "g"), encodeStreamsMetadata(sm),
		h("0000", "00000007", "0102030405060708", "01", "02", "04", "00000004"))
	mm := &streamsMemberMeta{RackID: &inst, ClientID: "c", ClientHost: "/h", RebalanceTimeout: 300, TopologyEpoch: 1,
		ProcessID: "p", UserEndpoint: &streamsEndpoint{Host: "q", Port: 8080}, ClientTags: map[string]string{"z": "1"}}
	check("StreamsGroupMemberMetadataValue", groupKey(RecStreamsGroupMemberMetadata, "g", "m"), encodeStreamsMemberMeta(mm),
		h("0000", "00", cs("i"), cs("c"), cs("/h"), "0000012c", "00000001", cs("p"),
			"01", cs("q"), "1f90", "00", uv(2), cs("z"), cs("1"), "00", "00"))
	mm.UserEndpoint = nil
	check("StreamsGroupMemberMetadataValue, no endpoint", groupKey(RecStreamsGroupMemberMetadata, "g", "m"), encodeStreamsMemberMeta(mm),
		h("0000", "00", cs("i"), cs("c"), cs("/h"), "0000012c", "00000001", cs("p"), "ff", uv(2), cs("z"), cs("1"), "00", "00"))
	check("StreamsGroupTargetAssignmentMetadataValue, KIP-1263 timestamp as tag 0", groupKey(RecStreamsGroupTargetMetadata, "g"),
		encodeStreamsTargetMetadata(12, 1791331200000), h("0000", "0000000c", "01", "00", "08", "000001a113a8ec00"))
	ts := newStreamsTaskSet()
	ts.Active[streamsTask{"0", 1}] = 3
	ts.Active[streamsTask{"0", 0}] = 2
	ts.Standby[streamsTask{"1", 0}] = 0
	check("StreamsGroupTargetAssignmentMemberValue", groupKey(RecStreamsGroupTargetMember, "g", "m"), encodeStreamsTarget(ts),
		h("0000", uv(2), cs("0"), uv(3), "00000000", "00000001", "00", uv(2), cs("1"), uv(2), "00000000", "00", uv(1), "00"))
	cur := &streamsCurrent{MemberEpoch: 3, PreviousMemberEpoch: 2, State: 0, Assigned: ts, PendingRevocation: newStreamsTaskSet()}
	activeEpochs := h(uv(3), "00000002", "00000003")
	check("StreamsGroupCurrentMemberAssignmentValue, active tasks with KIP-1251 epochs", groupKey(RecStreamsGroupCurrentMember, "g", "m"), encodeStreamsCurrent(cur),
		h("0000", "00000003", "00000002", "00",
			uv(2), cs("0"), uv(3), "00000000", "00000001", "01", "00", uv(len(activeEpochs)/2), activeEpochs,
			uv(2), cs("1"), uv(2), "00000000", "00",
			uv(1), uv(1), uv(1), uv(1), "00"))
	topo := &StreamsTopology{Epoch: 1, Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"in"},
		RepartitionSinkTopics: []string{}, StateChangelogTopics: []StreamsTopicInfo{{Name: "cl", Configs: [][2]string{{"k", "v"}}}},
		CopartitionGroups: []StreamsCopartitionGroup{{SourceTopics: []int16{0}}}}}}
	check("StreamsGroupTopologyValue", groupKey(RecStreamsGroupTopology, "g"), encodeStreamsTopology(topo),
		h("0000", "00000001", uv(2), cs("0"), uv(2), cs("in"), uv(1),
			uv(2), cs("cl"), "00000000", "0000", uv(2), cs("k"), cs("v"), "00", "00",
			uv(1), uv(1), uv(2), uv(2), "0000", uv(1), uv(1), "00", "00", "00"))
}

// OffsetCommit and GroupMetadata values are already Kafka's (kmsg's codecs); tombstones stay
// tombstones; a corrupt value is an error, never a panic.
func TestKafkaRecordPassThroughAndErrors(t *testing.T) {
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 3}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42, LeaderEpoch: -1, CommitTimestamp: 1}).AppendTo(nil)
	k, v, err := KafkaRecord(key, val)
	if err != nil || string(k) != string(key) || string(v) != string(val) {
		t.Fatalf("OffsetCommit: %x %x %v", k, v, err)
	}
	if k, v, err := KafkaRecord(cgMemberKey("g", "m"), nil); err != nil || string(k) != string(cgMemberKey("g", "m")) || v != nil {
		t.Fatalf("tombstone: %x %x %v", k, v, err)
	}
	for _, bad := range [][]byte{{0, 1}, {0, 9, 1}, cgMetadataValue(7, 1)[:5]} {
		if _, _, err := KafkaRecord(cgMetadataKey("g"), bad); !errors.Is(err, ErrCorruptRecord) {
			t.Errorf("corrupt value %x: %v", bad, err)
		}
	}
	if _, _, err := KafkaRecord([]byte{0, 99, 0, 1, 'g'}, []byte{0, 0}); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("unknown type: %v", err)
	}
}

// FuzzKafkaRecord: converting any key and value to Kafka's format never panics; a value it
// accepts is at most a small multiple of the input.
func FuzzKafkaRecord(f *testing.F) {
	ts := newStreamsTaskSet()
	ts.Active[streamsTask{"0", 1}] = 3
	seeds := [][2][]byte{
		{cgMetadataKey("g"), cgMetadataValue(7, 9)},
		{cgMemberKey("g", "m"), cgMemberValue(&consumerMember{id: "m", clientID: "c", subscribedNames: []string{"a"},
			classic: &cgClassicMeta{sessionTimeout: 1, protocols: []classicProtocol{{Name: "r", Metadata: []byte{1}}}}})},
		{cgCurrentKey("g", "m"), cgCurrentValue(&consumerCurrent{epoch: 1, assigned: topicPartitions{{1}: {0, 1}}})},
		{groupKey(RecStreamsGroupCurrentMember, "g", "m"), encodeStreamsCurrent(&streamsCurrent{Assigned: ts, PendingRevocation: newStreamsTaskSet()})},
		{groupKey(RecStreamsGroupTopology, "g"), encodeStreamsTopology(&StreamsTopology{Epoch: 1,
			Subtopologies: []StreamsSubtopology{{ID: "0", SourceTopics: []string{"in"}}}})},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, v, err := KafkaRecord(key, value)
		if err == nil && len(v) > 8*len(value)+64 {
			t.Fatalf("%d value bytes became %d", len(value), len(v))
		}
	})
}
