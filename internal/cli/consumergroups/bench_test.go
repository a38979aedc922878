package consumergroups

import "testing"

// BenchmarkDescribeEmptyGroup measures one in-process `--describe` of an
// Empty group (DescribeGroups/ConsumerGroupDescribe + OffsetFetch +
// ListOffsets against kfake, including client setup and teardown).
func BenchmarkDescribeEmptyGroup(b *testing.B) {
	f := newFixture(b)
	f.commitGroup("group1", map[string]map[int32]int64{"test": {0: 4, 1: 5}, "foo": {0: 1}})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := f.run("--describe", "--group", "group1"); r.Code != 0 {
			b.Fatalf("code %d: %s", r.Code, r.Stderr)
		}
	}
}

// BenchmarkRow measures table row formatting.
func BenchmarkRow(b *testing.B) {
	w := []int{15, 15, 10, 15, 15, 15, 15, 15}
	for i := 0; i < b.N; i++ {
		_ = row(w, "group1", "test", "0", "4", "10", "6", "-", "-", "-")
	}
}
