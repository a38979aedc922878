package coordinator

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// Golden bytes of the consumer group records (KIP-848): keys and every value layout, written
// out field by field from docs/records.md, then replayed back into an equal group.
func TestConsumerRecordGoldenBytes(t *testing.T) {
	h := func(parts ...string) string { return strings.Join(parts, "") }
	str := func(s string) string {
		return hex.EncodeToString([]byte{0, byte(len(s))}) + hex.EncodeToString([]byte(s))
	}
	t1 := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	t2 := [16]byte{0xff}
	uuid := func(u [16]byte) string { return hex.EncodeToString(u[:]) }
	inst, rack := "i", "r"

	check := func(name string, got []byte, want string) {
		t.Helper()
		if g := hex.EncodeToString(got); g != want {
			t.Errorf("%s =\n%s\nwant\n%s", name, g, want)
		}
	}

	check("metadata key", cgMetadataKey("g"), h("0003", str("g")))
	check("member key", cgMemberKey("g", "m"), h("0005", str("g"), str("m")))
	check("target meta key", cgTargetMetaKey("g"), h("0006", str("g")))
	check("target member key", cgTargetMemberKey("g", "m"), h("0007", str("g"), str("m")))
	check("current key", cgCurrentKey("g", "m"), h("0008", str("g"), str("m")))
	check("regex key", cgRegexKey("g", "t.*"), h("0010", str("g"), str("t.*")))

	check("metadata value", cgMetadataValue(7, 0x0102), h("0001", "00000007", "0000000000000102"))

	m := &consumerMember{id: "m", instanceID: &inst, clientID: "c", clientHost: "/h",
		subscribedNames: []string{"a", "b"}, serverAssignor: "uniform", rebalanceTimeout: 30000}
	memberV0 := h("0000", str("m"), str("i"), "ffff", str("c"), str("/h"), "00000002", str("a"), str("b"),
		str(""), str("uniform"), "00007530")
	check("member value v0", cgMemberValue(m), memberV0)
	mc := &consumerMember{id: "m", rackID: &rack, clientID: "c", clientHost: "/h", subscribedRegex: "t.*",
		rebalanceTimeout: 1000, classic: &cgClassicMeta{sessionTimeout: 45000,
			protocols: []classicProtocol{{Name: "range", Metadata: []byte{9}}}}}
	check("member value v1", cgMemberValue(mc), h("0001", str("m"), "ffff", str("r"), str("c"), str("/h"), "ffffffff",
		str("t.*"), str(""), "000003e8", "0000afc8", "00000001", str("range"), "00000001", "09"))

	check("target meta value", cgTargetMetaValue(5), h("0000", "00000005"))

	a := topicPartitions{t2: {4}, t1: {0, 2}}
	tps := h("00000002", uuid(t1), "00000002", "00000000", "00000002", uuid(t2), "00000001", "00000004")
	check("target member value", cgTargetMemberValue(a), h("0000", tps))
	check("target member value (empty)", cgTargetMemberValue(topicPartitions{}), h("0000", "00000000"))

	c := &consumerCurrent{epoch: 9, prevEpoch: 8, state: ConsumerMemberState(1), assigned: a, pending: topicPartitions{t1: {1}}}
	check("current value", cgCurrentValue(c), h("0000", "00000009", "00000008", "01", tps,
		"00000001", uuid(t1), "00000001", "00000001"))

	r := &consumerRegex{topics: []string{"ta", "tb"}, version: 3, timestamp: 1000}
	check("regex value", cgRegexValue(r), h("0000", "00000002", str("ta"), str("tb"), "0000000000000003", "00000000000003e8"))

	// The bytes replay into the same state.
	st := NewState(0, testConfig(), nil, &testIDs{})
	for _, rec := range []Record{
		{Key: cgMetadataKey("g"), Value: cgMetadataValue(7, 0x0102)},
		{Key: cgMemberKey("g", "m"), Value: cgMemberValue(m)},
		{Key: cgMemberKey("g", "m2"), Value: cgMemberValue(&consumerMember{id: "m2", rackID: &rack, clientID: "c", clientHost: "/h", subscribedRegex: "t.*", rebalanceTimeout: 1000, classic: mc.classic})},
		{Key: cgTargetMetaKey("g"), Value: cgTargetMetaValue(5)},
		{Key: cgTargetMemberKey("g", "m"), Value: cgTargetMemberValue(a)},
		{Key: cgCurrentKey("g", "m"), Value: cgCurrentValue(c)},
		{Key: cgRegexKey("g", "t.*"), Value: cgRegexValue(r)},
	} {
		if err := st.replay(rec); err != nil {
			t.Fatalf("replay %x: %v", rec.Key, err)
		}
	}
	g, ok := st.Groups["g"].(*ConsumerGroup)
	if !ok {
		t.Fatalf("group g = %T", st.Groups["g"])
	}
	if g.epoch != 7 || g.metadataHash != 0x0102 || g.assignmentEpoch != 5 {
		t.Errorf("epochs %d/%d hash %x", g.epoch, g.assignmentEpoch, g.metadataHash)
	}
	if !reflect.DeepEqual(g.members["m"], m) {
		t.Errorf("member m = %+v, want %+v", g.members["m"], m)
	}
	if got := g.members["m2"]; got.classic == nil || !reflect.DeepEqual(*got.classic, *mc.classic) {
		t.Errorf("member m2 classic = %+v", got.classic)
	}
	if !reflect.DeepEqual(g.targets["m"], a) {
		t.Errorf("target m = %v, want %v", g.targets["m"], a)
	}
	if !reflect.DeepEqual(g.currents["m"], c) {
		t.Errorf("current m = %+v, want %+v", g.currents["m"], c)
	}
	if !reflect.DeepEqual(g.regexes["t.*"], r) {
		t.Errorf("regex = %+v, want %+v", g.regexes["t.*"], r)
	}
	if g.owner(t1, 1) != "m" || g.owner(t2, 4) != "m" {
		t.Errorf("owners %v", g.owners)
	}
}
