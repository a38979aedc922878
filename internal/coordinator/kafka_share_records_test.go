package coordinator

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// Golden bytes of the share group records muster writes to __consumer_offsets, written out field
// by field from Kafka's ShareGroup*Value.json schemas (value version 0, flexible); the
// share-partition state is not a __consumer_offsets record.
func TestKafkaShareRecordGoldenBytes(t *testing.T) {
	h := func(parts ...string) string { return strings.Join(parts, "") }
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
	check("ShareGroupMetadataValue", shareMetadataKey("g"), shareMetadataValue(3, 0x0102030405060708),
		h("0000", "00000003", "01", "00", "08", "0102030405060708"))
	rack := "r"
	check("ShareGroupMemberMetadataValue", shareMemberKey("g", "m"), shareMemberValue(&shareMember{id: "m", rackID: &rack, clientID: "c", clientHost: "/h", subscribed: []string{"a"}}),
		h("0000", cs("r"), cs("c"), cs("/h"), uv(2), cs("a"), "00"))
	check("ShareGroupTargetAssignmentMetadataValue", shareTargetMetaKey("g"), shareTargetMetaValue(4), h("0000", "00000004", "00"))
	a := topicPartitions{t1: {0, 2}}
	check("ShareGroupTargetAssignmentMemberValue", shareTargetMemberKey("g", "m"), shareTargetMemberValue(a),
		h("0000", uv(2), uuid, uv(3), "00000000", "00000002", "00", "00"))
	check("ShareGroupCurrentMemberAssignmentValue", shareCurrentKey("g", "m"), shareCurrentValue(&shareCurrent{epoch: 4, prevEpoch: 3, assigned: a}),
		h("0000", "00000004", "00000003", "00", uv(2), uuid, uv(3), "00000000", "00000002", "00", "00"))

	sp := newSharePartition(t1, 0)
	if _, _, err := KafkaRecord(sharePartitionKey("g", t1, 0), sp.encode()); !errors.Is(err, ErrNotKafkaRecord) {
		t.Errorf("share-partition state: %v, want ErrNotKafkaRecord", err)
	}
	if _, _, err := KafkaRecord(shareMetadataKey("g"), []byte{0, 1, 0, 0, 0, 1}); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("share metadata of an unknown version: %v", err)
	}
}
