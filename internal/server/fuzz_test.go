package server

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/wire"
)

// decodeSlack is the fixed allocation allowance of one decode (the request struct and kmsg's
// small fixed-size allocations, more under -race), on top of DecodeAmplification × body bytes.
const decodeSlack = 64 << 10

// decodeAlloc decodes body as key/version and returns the bytes allocated meanwhile. MemStats
// counts the whole process, so goroutines of other tests (brokers winding down) can add to one
// measurement; a real amplification repeats on every decode, so the least of three counts.
func decodeAlloc(key, version int16, body []byte) (uint64, error) {
	var least uint64
	var err error
	for i := 0; i < 3; i++ {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = decodeBody(wire.Header{APIKey: key, APIVersion: version}, body)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; i == 0 || n < least {
			least = n
		}
	}
	return least, err
}

// FuzzDecode decodes arbitrary bytes as every request the server dispatches: sel picks the
// wire.Supported entry, version is folded into its accepted range. Decoding must not panic and
// must not allocate more than DecodeAmplification × body bytes (plus a fixed slack), which is
// what the server's decode budget reserves.
func FuzzDecode(f *testing.F) {
	for i, a := range wire.Supported {
		for v := a.Accepted.Min; v <= a.Accepted.Max; v++ {
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			f.Add(uint16(i), v, req.AppendTo(nil))
		}
	}
	f.Fuzz(func(t *testing.T, sel uint16, version int16, body []byte) {
		a := wire.Supported[int(sel)%len(wire.Supported)]
		span := int(a.Accepted.Max-a.Accepted.Min) + 1
		v := a.Accepted.Min + int16((int(version)%span+span)%span)
		alloc, _ := decodeAlloc(a.Key, v, body)
		if limit := raceAllocFactor * (uint64(len(body))*DecodeAmplification + decodeSlack); alloc > limit {
			t.Fatalf("%s v%d: decoding %d bytes allocated %d (limit %d)", a.Name, v, len(body), alloc, limit)
		}
	})
}

// TestDecodeAmplification places a hostile array length (the most kmsg's minimum-size check
// lets through, for minimum element sizes 1–8 bytes) at each of the first 24 body offsets of every
// key and accepted version, zero-filling the rest, and checks the decode's allocation stays
// within DecodeAmplification × body bytes.
func TestDecodeAmplification(t *testing.T) {
	const n = 1 << 14
	worst := map[string]float64{}
	for _, a := range wire.Supported {
		for v := a.Accepted.Min; v <= a.Accepted.Max; v++ {
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			flex := req.IsFlexible()
			for off := 0; off < 24; off++ {
				for _, m := range []int{1, 2, 3, 4, 8} {
					body := make([]byte, n)
					if flex {
						binary.PutUvarint(body[off:], uint64((n-off-3)/m+1))
					} else {
						binary.BigEndian.PutUint32(body[off:], uint32((n-off-4)/m))
					}
					alloc, _ := decodeAlloc(a.Key, v, body)
					if r := float64(alloc) / n; r > worst[a.Name] {
						worst[a.Name] = r
					}
					if limit := uint64(raceAllocFactor * (n*DecodeAmplification + decodeSlack)); alloc > limit {
						t.Errorf("%s v%d, length at offset %d for %d-byte elements: allocated %d for %d bytes (limit %d)",
							a.Name, v, off, m, alloc, n, limit)
					}
				}
			}
		}
	}
	for _, a := range wire.Supported {
		t.Logf("%-40s worst %.1f× body size", a.Name, worst[a.Name])
	}
}
