package assign

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortByMemberIDMatchesStringOrder checks the key-based member sort
// against a plain string sort, on ids with shared prefixes, zero bytes (which
// collide with the key padding), duplicates and varied lengths.
func TestSortByMemberIDMatchesStringOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	for i := range 2000 {
		n := r.IntN(40)
		if i%4 == 0 || i%8 == 1 {
			n = r.IntN(400) // radix path (runs of 32 and more)
		}
		prefix := []string{"", "member", "consumer-0123456789-"}[i%3]
		ms := make([]MemberSpec, n)
		for j := range ms {
			id := []byte(prefix)
			for range r.IntN(12) {
				id = append(id, alphabet[r.IntN(len(alphabet))])
			}
			if i%5 == 0 {
				// A long shared middle: equal keys over several offsets.
				id = append(id, "-a-shared-middle-of-some-length-"...)
				for range r.IntN(4) {
					id = append(id, alphabet[r.IntN(len(alphabet))])
				}
			}
			if i%8 == 1 {
				// First key equal within 5 groups; ids differ from byte 8.
				id = append([]byte{alphabet[r.IntN(len(alphabet))]}, "1234567"...)
				for range 1 + r.IntN(10) {
					id = append(id, alphabet[r.IntN(len(alphabet))])
				}
			}
			if i%6 == 0 {
				id = append(id, 0, 0, 0, 0, 0, 0, 0, 0, 0)[:len(id)+r.IntN(10)] // trailing zeros
			}
			ms[j].MemberID = string(id)
		}
		got := make([]*MemberSpec, n)
		want := make([]*MemberSpec, n)
		for j := range ms {
			got[j], want[j] = &ms[j], &ms[j]
		}
		if i%7 == 0 {
			slices.SortFunc(got, compareByMemberID) // already sorted input
		}
		sortByMemberID(got)
		slices.SortStableFunc(want, compareByMemberID)
		for j := range got {
			if got[j].MemberID != want[j].MemberID {
				t.Fatalf("case %d: position %d is %q, want %q", i, j, got[j].MemberID, want[j].MemberID)
			}
		}
	}
}
