package metahash

import (
	"encoding/hex"
	"testing"

	"github.com/spaolacci/murmur3"
)

var (
	id1 = [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65, 0x43, 0x21}
	id3 = [16]byte{0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11}
)

func racksOf(m map[int32][]string) func(int32) []string {
	return func(p int32) []string { return m[p] }
}

// The fixed vectors below were computed once by this implementation and are
// checked in so that any change of the byte layout (which would trigger a
// rebalance of every group after an upgrade) is caught.
func TestTopicHashFixedVectors(t *testing.T) {
	cases := []struct {
		name string
		got  int64
		want int64
	}{
		{"T1 foo 2 partitions with racks", TopicHash(id1, "foo", 2, racksOf(map[int32][]string{0: {"rack0", "rack1"}, 1: {"rack1", "rack2"}})), 2578100735334688998},
		{"T2 foo 2 partitions no racks", TopicHash(id1, "foo", 2, nil), -3732643622315954620},
		{"T3 bar 1 partition", TopicHash(id3, "bar", 1, nil), -726078548006868047},
		{"T4 duplicate racks", TopicHash(id1, "foo", 2, racksOf(map[int32][]string{0: {"rack0", "rack0"}})), -2030927187128097241},
		{"T5 non-ASCII name", TopicHash(id1, "ü", 1, nil), 9030329534687211537},
		{"T6 zero id empty name", TopicHash([16]byte{}, "", 0, nil), 5286743059252095332},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestGroupHashFixedVectors(t *testing.T) {
	t1 := int64(2578100735334688998)
	t3 := int64(-726078548006868047)
	if got, want := GroupHash(map[string]int64{"foo": t1, "bar": t3}), int64(4430122922662509949); got != want {
		t.Errorf("G1: got %d, want %d", got, want)
	}
	if got := GroupHash(map[string]int64{"foo": t1}); got != t1 {
		t.Errorf("G2: got %d, want %d", got, t1)
	}
	// bar (2) at position 1, foo (1) at position 2: 2*1 + 1*2.
	if got := GroupHash(map[string]int64{"foo": 1, "bar": 2}); got != 4 {
		t.Errorf("G3: got %d, want 4", got)
	}
	if GroupHash(nil) != 0 || GroupHash(map[string]int64{}) != 0 {
		t.Error("empty group hash must be 0")
	}
}

// TestDocumentedLayout rebuilds the hashed stream byte by byte from the
// documented layout and checks that TopicHash hashes exactly that.
func TestDocumentedLayout(t *testing.T) {
	// magic | id | name length 3 | "foo" | count 2 | p0: idx, 0 racks, sum 0 | p1: idx, 0 racks, sum 0
	stream, _ := hex.DecodeString("00" + "0123456789abcdef0fedcba987654321" + "03000000" + "666f6f" + "02000000" +
		"00000000" + "00000000" + "0000000000000000" +
		"01000000" + "00000000" + "0000000000000000")
	if got, want := TopicHash(id1, "foo", 2, nil), int64(murmur3.Sum64(stream)); got != want {
		t.Fatalf("no-rack layout: got %d, want %d", got, want)
	}

	// One partition with racks "a" and "bc": rack hashes of len-prefixed rack bytes, summed.
	ra, _ := hex.DecodeString("01000000" + "61")
	rbc, _ := hex.DecodeString("02000000" + "6263")
	sum := int64(murmur3.Sum64(ra)) + int64(murmur3.Sum64(rbc))
	var sumLE [8]byte
	for i := range 8 {
		sumLE[i] = byte(uint64(sum) >> (8 * i))
	}
	head, _ := hex.DecodeString("00" + "0123456789abcdef0fedcba987654321" + "01000000" + "78" + "01000000" +
		"00000000" + "02000000")
	stream = append(head, sumLE[:]...)
	got := TopicHash(id1, "x", 1, func(int32) []string { return []string{"bc", "a"} })
	if want := int64(murmur3.Sum64(stream)); got != want {
		t.Fatalf("rack layout: got %d, want %d", got, want)
	}
}

func TestRackOrderDoesNotMatter(t *testing.T) {
	a := TopicHash(id1, "foo", 3, racksOf(map[int32][]string{0: {"r1", "r2", "r3"}, 2: {"x", "y"}}))
	b := TopicHash(id1, "foo", 3, racksOf(map[int32][]string{0: {"r3", "r1", "r2"}, 2: {"y", "x"}}))
	if a != b {
		t.Fatalf("rack order changed the hash: %d vs %d", a, b)
	}
	// Moving a rack to another partition must change it.
	c := TopicHash(id1, "foo", 3, racksOf(map[int32][]string{0: {"r1", "r2"}, 1: {"r3"}, 2: {"x", "y"}}))
	if a == c {
		t.Fatal("moving a rack between partitions did not change the hash")
	}
	// Adding or removing a rack must change it.
	d := TopicHash(id1, "foo", 3, racksOf(map[int32][]string{0: {"r1", "r2", "r3"}, 2: {"x"}}))
	if a == d {
		t.Fatal("removing a rack did not change the hash")
	}
}

func TestMagicByteIsPartOfTheHash(t *testing.T) {
	r := racksOf(map[int32][]string{0: {"rack0"}})
	if topicHash(MagicByte, id1, "foo", 2, r) != TopicHash(id1, "foo", 2, r) {
		t.Fatal("TopicHash must use MagicByte")
	}
	if topicHash(1, id1, "foo", 2, r) == topicHash(MagicByte, id1, "foo", 2, r) {
		t.Fatal("a different magic byte must give a different hash")
	}
}

func TestEveryFieldChangesTheHash(t *testing.T) {
	base := TopicHash(id1, "foo", 2, nil)
	if TopicHash(id3, "foo", 2, nil) == base {
		t.Error("topic id change not detected")
	}
	if TopicHash(id1, "fop", 2, nil) == base {
		t.Error("name change not detected")
	}
	if TopicHash(id1, "foo", 3, nil) == base {
		t.Error("partitions added not detected")
	}
	if TopicHash(id1, "foo", 2, racksOf(map[int32][]string{1: {"r"}})) == base {
		t.Error("rack added not detected")
	}
	// Name and partition bytes must not be ambiguous: a name that ends with
	// bytes resembling the count must not collide.
	if TopicHash(id1, "fo", 2, nil) == TopicHash(id1, "fo\x02", 2, nil) {
		t.Error("length prefix not effective")
	}
}

func TestGroupHashSwappedTopicHashesDiffer(t *testing.T) {
	a := TopicHash(id1, "a", 1, nil)
	b := TopicHash(id3, "b", 4, nil)
	before := GroupHash(map[string]int64{"topicA": a, "topicB": b})
	after := GroupHash(map[string]int64{"topicA": b, "topicB": a})
	if before == after {
		t.Fatal("swapping the hashes of two topics must change the group hash")
	}
	// Map iteration order must not matter.
	for range 20 {
		if GroupHash(map[string]int64{"topicB": b, "topicA": a}) != before {
			t.Fatal("group hash depends on map order")
		}
	}
	// Adding or removing a topic changes it.
	if GroupHash(map[string]int64{"topicA": a}) == before {
		t.Fatal("removing a topic not detected")
	}
}

func BenchmarkTopicHash(b *testing.B) {
	racks := []string{"rack-a", "rack-b", "rack-c"}
	for b.Loop() {
		TopicHash(id1, "orders", 100, func(int32) []string { return racks })
	}
}
