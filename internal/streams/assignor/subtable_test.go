package assignor

import (
	"fmt"
	"testing"
)

func TestSubTableFind(t *testing.T) {
	sets := map[string]func(i int) string{
		"short":    func(i int) string { return fmt.Sprint(i) },
		"named":    func(i int) string { return fmt.Sprintf("topic-%d_subtopology", i) },
		"suffix":   func(i int) string { return fmt.Sprintf("subtopology-%d", i) },
		"middle":   func(i int) string { return fmt.Sprintf("aaaaaaaaa%05daaaaaaaaaaaaaaaaaaaaaaaaaa", i) }, // cheap hash collides
		"prefixes": func(i int) string { return "x" + fmt.Sprint(i) + "\x00" },
	}
	var h subTable
	for name, id := range sets {
		for _, n := range []int{0, 1, 7, 100, 1000} {
			subs := make([]Subtopology, n)
			for i := range subs {
				subs[i] = Subtopology{ID: id(i)}
			}
			h.build(subs)
			for i := range subs {
				if got := h.find(subs, id(i)); got != int32(i) {
					t.Fatalf("%s/%d: find(%q) = %d, want %d", name, n, id(i), got, i)
				}
			}
			for _, absent := range []string{"", id(n), id(n) + "x", "zz"} {
				if got := h.find(subs, absent); got != -1 {
					t.Fatalf("%s/%d: find(%q) = %d, want -1", name, n, absent, got)
				}
			}
			if name == "middle" && n == 1000 && !h.strong {
				t.Fatalf("colliding ids did not switch to maphash")
			}
			if (name == "short" || name == "named" || name == "suffix") && h.strong {
				t.Fatalf("%s/%d: typical ids need maphash", name, n)
			}
		}
	}
}
