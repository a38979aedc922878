package assignor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// digestAssignment hashes an assignment in a canonical order (members, then
// kinds, then subtopologies, sorted; partitions in output order), chained
// onto h, so that two assignments hash equal exactly when they are equal
// (nil and empty task sets hash alike).
func digestAssignment(h []byte, a AssignmentMap) []byte {
	d := sha256.New()
	d.Write(h)
	members := make([]string, 0, len(a))
	for m := range a {
		members = append(members, m)
	}
	slices.Sort(members)
	var buf [4]byte
	put := func(v int) {
		binary.BigEndian.PutUint32(buf[:], uint32(v))
		d.Write(buf[:])
	}
	for _, m := range members {
		d.Write([]byte(m))
		d.Write([]byte{0})
		ma := a[m]
		for _, ts := range [3]TaskSet{ma.Active, ma.Standby, ma.Warmup} {
			subs := make([]string, 0, len(ts))
			for s := range ts {
				subs = append(subs, s)
			}
			slices.Sort(subs)
			put(len(subs))
			for _, s := range subs {
				d.Write([]byte(s))
				d.Write([]byte{0})
				put(len(ts[s]))
				for _, p := range ts[s] {
					put(int(p))
				}
			}
		}
	}
	return d.Sum(nil)
}

// digestSpecs yields a fixed, varied set of group specs: random groups
// (fresh; re-assigned from their result with random lags, a member leaving,
// members joining, and a subtopology dropped), and benchmark-shaped groups.
func digestSpecs(tb testing.TB) []*GroupSpec {
	var out []*GroupSpec
	r := rand.New(rand.NewPCG(2026, 7))
	for i := 0; i < 600; i++ {
		spec := randomSpec(r, 1+r.IntN(40))
		out = append(out, spec)
		prev := mustAssign(tb, spec)
		next := withPrevious(spec, prev)
		// Random lags: known, unknown and out-of-range tasks.
		for j := range next.Members {
			if r.IntN(3) == 0 {
				continue
			}
			lm := map[string]map[int32]int64{}
			for k := r.IntN(8); k > 0; k-- {
				sub := fmt.Sprint(r.IntN(8))
				if lm[sub] == nil {
					lm[sub] = map[int32]int64{}
				}
				lm[sub][int32(r.IntN(30)-2)] = int64(r.IntN(300) - 50)
			}
			next.Members[j].TaskLags = lags(lm)
		}
		if n := len(next.Members); n > 1 && r.IntN(2) == 0 {
			k := r.IntN(n)
			next.Members = append(next.Members[:k:k], next.Members[k+1:]...)
		}
		for k := r.IntN(3); k > 0; k-- {
			next.Members = append(next.Members, MemberSpec{
				MemberID:  fmt.Sprintf("new%d", k),
				ProcessID: fmt.Sprintf("p%03d", r.IntN(len(next.Members)+1)),
			})
		}
		if len(next.Subtopologies) > 1 && r.IntN(4) == 0 {
			next.Subtopologies = next.Subtopologies[1:]
		}
		out = append(out, next)
	}
	for _, members := range []int{100, 1000} {
		for _, partitions := range []int{10, 100} {
			for _, subtopologies := range []int{10, 100} {
				if members == 1000 && partitions*subtopologies > 1000 {
					continue // keep the test short; the largest points are below
				}
				for _, standby := range []int{0, 1} {
					for _, perProcess := range []int{1, 50} {
						for _, incremental := range []bool{false, true} {
							for _, offsets := range []bool{false, true} {
								out = append(out, benchSpec(tb, benchParams{members, partitions, subtopologies, standby, perProcess, incremental, offsets}))
							}
						}
					}
				}
			}
		}
	}
	out = append(out,
		benchSpec(tb, benchParams{1000, 100, 100, 1, 1, true, true}),
		benchSpec(tb, benchParams{1000, 100, 100, 1, 50, false, true}))
	return out
}

// TestOutputDigestUnchanged pins the exact output of the sticky assignor
// over a fixed set of groups. Performance work must not change any
// assignment; update the constant only for an intended behaviour change.
func TestOutputDigestUnchanged(t *testing.T) {
	const want = "978c9dba039f1e6cc105647da1bd2b5f560aa73f6aa4dfce5c4935d23ac178b4"
	var h []byte
	for _, spec := range digestSpecs(t) {
		h = digestAssignment(h, mustAssign(t, spec))
	}
	if got := hex.EncodeToString(h); got != want {
		t.Errorf("output digest %s, want %s", got, want)
	}
}
