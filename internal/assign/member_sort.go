package assign

import (
	"slices"
	"strings"
)

// sortByMemberID sorts ms by member id, as slices.SortFunc with
// compareByMemberID would, without comparing strings in the common case:
// each member's key is the 8 bytes that follow the longest prefix shared by
// all member ids (big-endian, zero padded). Keys are radix sorted (one
// counting pass per byte that varies); only runs of equal keys are then
// sorted by whole id. Different keys order like their ids (a zero pad sorts
// like the end of a shorter id, and a real zero byte ties with it, falling
// back to the id), so the result is the sorted order.
// Cost O(total id bytes + 8·n), plus the comparison sort of equal-key runs.
func sortByMemberID(ms []*MemberSpec) {
	n := len(ms)
	if n < 2 {
		return
	}
	lcp := len(ms[0].MemberID)
	for _, m := range ms[1:] {
		lcp = min(lcp, commonPrefix(ms[0].MemberID[:lcp], m.MemberID))
		if lcp == 0 {
			break
		}
	}
	type keyed struct {
		key uint64
		idx int32
	}
	buf := make([]keyed, 2*n)
	ks, tmp := buf[:n], buf[n:]
	sorted := true
	for i, m := range ms {
		ks[i] = keyed{prefixKey(m.MemberID[lcp:]), int32(i)}
		if i > 0 && ks[i-1].key > ks[i].key {
			sorted = false
		}
	}
	if !sorted {
		var count [256]int32
		for shift := 0; shift < 64; shift += 8 {
			clear(count[:])
			for _, k := range ks {
				count[byte(k.key>>shift)]++
			}
			if count[byte(ks[0].key>>shift)] == int32(n) {
				continue // this byte is the same in every key
			}
			sum := int32(0)
			for i, c := range count {
				count[i] = sum
				sum += c
			}
			for _, k := range ks {
				d := byte(k.key >> shift)
				tmp[count[d]] = k
				count[d]++
			}
			ks, tmp = tmp, ks
		}
	}
	// Runs of equal keys: by whole id. The radix sort is stable, so a run
	// that is already in input order needs no work when sorted.
	for i := 0; i < n; {
		j := i + 1
		for j < n && ks[j].key == ks[i].key {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ks[i:j], func(a, b keyed) int {
				return strings.Compare(ms[a.idx].MemberID, ms[b.idx].MemberID)
			})
		}
		i = j
	}
	out := make([]*MemberSpec, n)
	for i, k := range ks {
		out[i] = ms[k.idx]
	}
	copy(ms, out)
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// prefixKey packs the first 8 bytes of s big-endian, padding with zeros.
func prefixKey(s string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}
