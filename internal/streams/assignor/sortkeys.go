package assignor

import (
	"cmp"
	"slices"
	"strings"
)

// strKey is an index with an 8-byte big-endian prefix of its string, taken
// after the prefix all strings share.
type strKey struct {
	pre uint64
	idx int32
}

// sortByString sorts idx by (str(i), i) ascending, which is the order of a
// stable sort by str of an ascending idx. Most comparisons are decided by
// an integer prefix key (the 8 bytes after the common prefix of all
// strings, zero padded: it orders like the strings themselves), the rest
// by strings.Compare. buf is scratch storage, returned for reuse.
func sortByString(idx []int32, str func(int32) string, buf []strKey) []strKey {
	n := len(idx)
	if n < 2 {
		return buf
	}
	// Already sorted (a caller passing members in id order): nothing to do.
	sorted := true
	for k := 1; k < n && sorted; k++ {
		c := strings.Compare(str(idx[k-1]), str(idx[k]))
		sorted = c < 0 || (c == 0 && idx[k-1] < idx[k])
	}
	if sorted {
		return buf
	}
	first := str(idx[0])
	lcp := len(first)
	for _, i := range idx[1:] {
		s := str(i)
		j, l := 0, min(lcp, len(s))
		for j < l && s[j] == first[j] {
			j++
		}
		lcp = j
		if lcp == 0 {
			break
		}
	}
	keys := grow(buf, n)
	for k, i := range idx {
		keys[k] = strKey{prefix8(str(i)[lcp:]), i}
	}
	slices.SortFunc(keys, func(a, b strKey) int {
		if a.pre != b.pre {
			return cmp.Compare(a.pre, b.pre)
		}
		if c := strings.Compare(str(a.idx)[lcp:], str(b.idx)[lcp:]); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	for k := range keys {
		idx[k] = keys[k].idx
	}
	return keys
}

// prefix8 returns the first 8 bytes of s as a big-endian integer, zero
// padded.
func prefix8(s string) uint64 {
	var v uint64
	for i := 0; i < 8; i++ {
		v <<= 8
		if i < len(s) {
			v |= uint64(s[i])
		}
	}
	return v
}
