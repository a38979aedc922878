package assignor

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sortByString must order exactly like a stable sort by strings.Compare.
func TestSortByStringMatchesStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"", "\x00", "a", "b", "member-", "1", "10", "9", "\xff", "process-"}
	var buf []strKey
	for round := 0; round < 2000; round++ {
		n := r.IntN(40)
		strs := make([]string, n)
		prefix := alphabet[r.IntN(len(alphabet))] + alphabet[r.IntN(len(alphabet))]
		for i := range strs {
			var b strings.Builder
			b.WriteString(prefix)
			for k := r.IntN(5); k > 0; k-- {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			strs[i] = b.String()
			if i > 0 && r.IntN(4) == 0 {
				strs[i] = strs[r.IntN(i)] // duplicates
			}
		}
		got := make([]int32, n)
		want := make([]int32, n)
		for i := range got {
			got[i], want[i] = int32(i), int32(i)
		}
		if round%3 == 0 {
			slices.SortStableFunc(got, func(a, b int32) int { return strings.Compare(strs[a], strs[b]) })
			copy(want, got)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return strings.Compare(strs[a], strs[b]) })
		buf = sortByString(got, func(i int32) string { return strs[i] }, buf)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: got %v, want %v for %q", round, got, want, strs)
		}
	}
}
