package assign

import (
	"cmp"
	"slices"
	"strings"
)

// sortByMemberID sorts ms by member id, as slices.SortFunc with
// compareByMemberID would, but compares fixed-size keys instead of strings:
// each member's key is the 8 bytes that follow the longest prefix shared by
// all member ids (big-endian, zero padded), and only members with equal keys
// fall back to comparing the whole ids. Equal keys order equal prefixes
// consistently with the strings, so the result is the same sorted order.
// Cost O(total id bytes + n log n) integer comparisons.
func sortByMemberID(ms []*MemberSpec) {
	if len(ms) < 2 {
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
		m   *MemberSpec
	}
	ks := make([]keyed, len(ms))
	sorted := true
	for i, m := range ms {
		ks[i] = keyed{prefixKey(m.MemberID[lcp:]), m}
		if i > 0 && sorted && compareKeyed(ks[i-1].key, ks[i].key, ks[i-1].m, ks[i].m) > 0 {
			sorted = false
		}
	}
	if sorted {
		return
	}
	slices.SortFunc(ks, func(a, b keyed) int { return compareKeyed(a.key, b.key, a.m, b.m) })
	for i := range ks {
		ms[i] = ks[i].m
	}
}

func compareKeyed(ka, kb uint64, a, b *MemberSpec) int {
	if c := cmp.Compare(ka, kb); c != 0 {
		return c
	}
	return strings.Compare(a.MemberID, b.MemberID)
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
