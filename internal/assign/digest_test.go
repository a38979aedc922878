package assign

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// digest hashes an assignment in a canonical order (members, then topics,
// sorted), so that two assignments hash equal exactly when they are equal.
func digest(h []byte, a AssignmentMap) []byte {
	d := sha256.New()
	d.Write(h)
	members := make([]string, 0, len(a))
	for m := range a {
		members = append(members, m)
	}
	slices.Sort(members)
	var buf [4]byte
	for _, m := range members {
		d.Write([]byte(m))
		d.Write([]byte{0})
		tps := a[m]
		ids := make([]TopicID, 0, len(tps))
		for id := range tps {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, compareTopicID)
		for _, id := range ids {
			d.Write(id[:])
			binary.BigEndian.PutUint32(buf[:], uint32(len(tps[id])))
			d.Write(buf[:])
			for _, p := range tps[id] {
				binary.BigEndian.PutUint32(buf[:], uint32(p))
				d.Write(buf[:])
			}
		}
	}
	return d.Sum(nil)
}

// digestGroups yields a fixed, varied set of groups: random small groups
// (homogeneous and heterogeneous, with and without racks, with random
// member ids), benchmark-shaped groups, and for each the re-assignment after
// members leave and join (stickiness paths).
type digestGroup struct {
	name string
	spec *GroupSpec
	md   *meta
}

func digestGroups() []digestGroup {
	var gs []digestGroup
	r := rand.New(rand.NewPCG(2026, 11))
	for i := range 300 {
		spec, md := randomSpec(r, i%2 == 1)
		if i%3 == 0 {
			md.racks = func(id TopicID, p int32) []string {
				return []string{[]string{"a", "b", "c"}[(int(p)+int(id[1]))%3]}
			}
			for j := range spec.Members {
				if j%4 != 3 {
					spec.Members[j].RackID = []string{"a", "b", "c"}[j%3]
				}
			}
		}
		if i%5 == 0 {
			// Member ids of varied lengths sharing long prefixes, and
			// bytes that sort around the zero padding of the sort keys.
			for j := range spec.Members {
				spec.Members[j].MemberID = fmt.Sprintf("consumer-%s-%d", []string{"", "\x00", "a", "ab\x00", "zz"}[j%5], r.IntN(1000))
			}
			slices.SortFunc(spec.Members, func(a, b MemberSpec) int { return compareByMemberID(&a, &b) })
			spec.Members = slices.CompactFunc(spec.Members, func(a, b MemberSpec) bool { return a.MemberID == b.MemberID })
		}
		gs = append(gs, digestGroup{fmt.Sprintf("random%d", i), spec, md})
	}
	for _, hetero := range []bool{false, true} {
		for _, racks := range []bool{false, true} {
			for _, size := range [][2]int{{30, 4}, {100, 10}, {200, 50}} {
				spec, md := benchGroup(size[0], size[1], 7, hetero, racks)
				gs = append(gs, digestGroup{fmt.Sprintf("bench%v%v%d", hetero, racks, size[0]), spec, md})
			}
		}
	}
	return gs
}

// TestOutputDigestUnchanged pins the exact output of both assignors over a
// fixed set of groups (first assignment, then a re-assignment after 1/4 of
// the members left and new ones joined). Performance work must not change
// any assignment; update the constants only for an intended behaviour change.
func TestOutputDigestUnchanged(t *testing.T) {
	want := map[string]string{
		UniformName: "26857b0289b79ecc4a5571f2ab7c73e12c2f19a13d553b040614f3e540755b9d",
		RangeName:   "0e36771930308558b3c24c3ec855fe294627f96b20146def17e0a6001c18bb74",
	}
	for _, a := range assignors {
		var h []byte
		for _, g := range digestGroups() {
			name, spec, md := g.name, g.spec, g.md
			out, err := assignMap(a, spec, md)
			if err != nil {
				t.Fatalf("%s %s: %v", a.Name(), name, err)
			}
			h = digest(h, out)
			next := withCurrent(spec, out)
			kept := next.Members[:0]
			for i, ms := range next.Members {
				if i%4 != 1 {
					kept = append(kept, ms)
				}
			}
			for i := range len(next.Members) / 5 {
				ms := next.Members[i]
				ms.MemberID = fmt.Sprintf("joiner-%d", i)
				ms.Current = nil
				kept = append(kept, ms)
			}
			next.Members = kept
			if len(kept) == 0 {
				continue
			}
			out2, err := assignMap(a, next, md)
			if err != nil {
				t.Fatalf("%s %s (again): %v", a.Name(), name, err)
			}
			h = digest(h, out2)
		}
		if got := hex.EncodeToString(h); got != want[a.Name()] {
			t.Errorf("%s: output digest %s, want %s", a.Name(), got, want[a.Name()])
		}
	}
}
