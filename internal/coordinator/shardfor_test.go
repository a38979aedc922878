package coordinator

import (
	"testing"
	"unicode/utf16"
)

// javaHash is String.hashCode over the UTF-16 encoding, the reference ShardFor must match
// (Kafka: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions).
func javaHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

func TestShardForMatchesJavaHashCode(t *testing.T) {
	if got := javaHash("abc"); got != 96354 { // "abc".hashCode() in Java
		t.Fatalf("reference hash of abc = %d", got)
	}
	for _, g := range []string{"", "abc", "my-group", "groupé", "团体", "emoji-😀-group", "\U0010FFFF", "polygenelubricants"} {
		h := javaHash(g)
		want := int32(0)
		if h != -2147483648 {
			if h < 0 {
				h = -h
			}
			want = h % 50
		}
		if got := ShardFor(g, 50); got != want {
			t.Errorf("ShardFor(%q, 50) = %d, want %d", g, got, want)
		}
	}
	// "polygenelubricants".hashCode() is Integer.MIN_VALUE: Kafka's Utils.abs maps it to 0.
	if javaHash("polygenelubricants") != -2147483648 {
		t.Fatalf("expected MIN_VALUE hash")
	}
}

func BenchmarkShardFor(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ShardFor("bench-consumer-group-42", 50)
	}
}
