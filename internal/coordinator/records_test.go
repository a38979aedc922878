package coordinator

import (
	"encoding/hex"
	"testing"
	"time"
)

// Golden bytes: any change to a record layout must be deliberate (bump its version) because
// data dirs written by older builds must still load.
func TestOffsetRecordGoldenBytes(t *testing.T) {
	key := offsetKey("g", "t", 3)
	if got, want := hex.EncodeToString(key), "0001"+"0001"+"67"+"0001"+"74"+"00000003"; got != want {
		t.Fatalf("offset key = %s, want %s", got, want)
	}
	v := offsetValue(&OffsetValue{Offset: 42, LeaderEpoch: 7, Metadata: "m", CommitMs: 1000})
	want := "0003" + "000000000000002a" + "00000007" + "0001" + "6d" + "00000000000003e8"
	if got := hex.EncodeToString(v); got != want {
		t.Fatalf("offset value v3 = %s, want %s", got, want)
	}
	v = offsetValue(&OffsetValue{Offset: 1, Metadata: "", CommitMs: 1, ExpireMs: 2})
	want = "0001" + "0000000000000001" + "0000" + "0000000000000001" + "0000000000000002"
	if got := hex.EncodeToString(v); got != want {
		t.Fatalf("offset value v1 = %s, want %s", got, want)
	}
}

func TestGroupMetadataRecordGoldenBytes(t *testing.T) {
	if got, want := hex.EncodeToString(classicKey("g")), "0002"+"0001"+"67"; got != want {
		t.Fatalf("group key = %s, want %s", got, want)
	}
	g := newSimpleClassicGroup("g")
	g.protocolType, g.protocolName, g.generation, g.leader = "consumer", "range", 5, "m1"
	g.members["m1"] = &classicMember{id: "m1", clientID: "c", clientHost: "/h", sessionTimeout: 10 * time.Second,
		rebalanceTimeout: 20 * time.Second, protocols: []classicProtocol{{Name: "range", Metadata: []byte{1}}}, assignment: []byte{2}}
	v := g.metadataValue(time.UnixMilli(9))
	got := hex.EncodeToString(v.AppendTo(nil))
	want := "0003" + "0008" + hex.EncodeToString([]byte("consumer")) + "00000005" + "0005" + hex.EncodeToString([]byte("range")) +
		"0002" + hex.EncodeToString([]byte("m1")) + "0000000000000009" + "00000001" +
		"0002" + hex.EncodeToString([]byte("m1")) + "ffff" + "0001" + "63" + "0002" + hex.EncodeToString([]byte("/h")) +
		"00004e20" + "00002710" + "00000001" + "01" + "00000001" + "02"
	if got != want {
		t.Fatalf("group value v3 =\n%s\nwant\n%s", got, want)
	}
}

// A record that fails to decode is an error, never a panic, and names the record.
func TestCorruptRecordsAreErrors(t *testing.T) {
	st := NewState(0, testConfig(), nil, &testIDs{})
	for _, r := range []Record{
		{Key: []byte{0}},
		{Key: []byte{0, 1, 0}},
		{Key: offsetKey("g", "t", 0), Value: []byte{0, 3, 1}},
		{Key: classicKey("g"), Value: []byte{0, 3, 0xff, 0xff, 0xff}},
		{Key: []byte{0x7f, 0x7f}, Value: []byte{1}},
	} {
		if err := st.Replay(r); err == nil {
			t.Errorf("replay(%x, %x) = nil, want error", r.Key, r.Value)
		}
	}
}

func TestPendingTxnOffsetRecordGoldenBytes(t *testing.T) {
	k := txnOffsetKey{group: "g", topic: "t", partition: 3}
	if got, want := hex.EncodeToString(pendingOffsetKey(k, 9)), "03e8"+"0001"+"67"+"0000000000000009"+"0001"+"74"+"00000003"; got != want {
		t.Fatalf("pending key = %s, want %s", got, want)
	}
	v := pendingOffsetValue(&PendingOffset{OffsetValue: OffsetValue{Offset: 42, LeaderEpoch: 7, Metadata: "m", CommitMs: 1000},
		ProducerEpoch: 2, Seq: 5, Superseded: true})
	want := "0000" + "000000000000002a" + "00000007" + "0001" + "6d" + "00000000000003e8" + "0002" + "0000000000000005" + "01"
	if got := hex.EncodeToString(v); got != want {
		t.Fatalf("pending value = %s, want %s", got, want)
	}
	st := NewState(0, testConfig(), nil, &testIDs{})
	for _, r := range []Record{
		{Key: pendingOffsetKey(k, 9)[:9], Value: v},
		{Key: pendingOffsetKey(k, 9), Value: v[:20]},
		{Key: pendingOffsetKey(k, 9), Value: append([]byte{0, 1}, v[2:]...)},
	} {
		if err := st.Replay(r); err == nil {
			t.Errorf("replay(%x, %x) = nil, want error", r.Key, r.Value)
		}
	}
}
