package assign

import (
	"slices"
	"strings"
)

// sortByMemberID sorts ms by member id, as slices.SortFunc with
// compareByMemberID would, comparing 8-byte integer keys instead of strings:
// a member's key is 8 bytes of its id (big-endian, zero padded) from an
// offset, first the end of the prefix shared by all ids. Keys are radix
// sorted (one counting pass per byte that varies); runs of equal keys are
// sorted the same way on the next 8 bytes, and small runs, or runs whose ids
// all end within the key, by comparing whole ids. Different keys order like
// their ids (a zero pad sorts like the end of a shorter id; a real zero byte
// ties with it and is resolved later), so the result is the sorted order.
// Cost O(total id bytes + n) for ids that differ early, as generated ids do.
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
	buf := make([]keyedMember, 2*n)
	ks, tmp := buf[:n], buf[n:]
	sorted := true
	for i, m := range ms {
		ks[i] = keyedMember{prefixKey(m.MemberID, lcp), m}
		if i > 0 && ks[i-1].key > ks[i].key {
			sorted = false
		}
	}
	sortKeyed(ks, tmp, lcp, sorted)
	for i := range ks {
		ms[i] = ks[i].m
	}
}

type keyedMember struct {
	key uint64
	m   *MemberSpec
}

// smallRun is the run length below which ids are compared directly.
const smallRun = 32

// sortKeyed sorts ks (keys taken at offset off) using tmp (same length) as
// scratch; the result is left in ks.
func sortKeyed(ks, tmp []keyedMember, off int, sorted bool) {
	n := len(ks)
	if n < smallRun {
		slices.SortFunc(ks, func(a, b keyedMember) int { return strings.Compare(a.m.MemberID, b.m.MemberID) })
		return
	}
	if !sorted {
		src, dst := ks, tmp
		var count [256]int32
		for shift := 0; shift < 64; shift += 8 {
			clear(count[:])
			for _, k := range src {
				count[byte(k.key>>shift)]++
			}
			if count[byte(src[0].key>>shift)] == int32(n) {
				continue // this byte is the same in every key
			}
			sum := int32(0)
			for i, c := range count {
				count[i] = sum
				sum += c
			}
			for _, k := range src {
				d := byte(k.key >> shift)
				dst[count[d]] = k
				count[d]++
			}
			src, dst = dst, src
		}
		if &src[0] != &ks[0] {
			copy(ks, src)
		}
	}
	sortRuns(ks, tmp, off)
}

// sortRuns sorts each run of equal keys (taken at offset off) of ks on the
// ids' next 8 bytes.
func sortRuns(ks, tmp []keyedMember, off int) {
	n := len(ks)
	for i := 0; i < n; {
		j := i + 1
		for j < n && ks[j].key == ks[i].key {
			j++
		}
		if j-i > 1 {
			run := ks[i:j]
			next := off + 8
			longer := false
			sorted := true
			for r := range run {
				run[r].key = prefixKey(run[r].m.MemberID, next)
				longer = longer || len(run[r].m.MemberID) > next
				if r > 0 && run[r-1].key > run[r].key {
					sorted = false
				}
			}
			if longer {
				sortKeyed(run, tmp[i:j], next, sorted)
			} else {
				// All ids end within the key: equal keys mean ids that
				// differ at most in trailing zero bytes.
				slices.SortFunc(run, func(a, b keyedMember) int { return strings.Compare(a.m.MemberID, b.m.MemberID) })
			}
		}
		i = j
	}
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

// prefixKey packs the 8 bytes of s from offset off big-endian, padding with
// zeros past the end of s.
func prefixKey(s string, off int) uint64 {
	var k uint64
	for i := off; i < off+8; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}
