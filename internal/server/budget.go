package server

import "sync"

// DecodeAmplification is the most memory kmsg allocates while decoding a request body, per body
// byte: kmsg checks an array length against the bytes left times the element's minimum encoded
// size, but then allocates the whole slice of Go structs (e.g. 32-byte elements for 1-byte
// minimum encodings) before reading the elements. Measured over every key and accepted version
// by TestDecodeAmplification and FuzzDecode (worst seen: 32×, OffsetCommit/Produce/Fetch).
const DecodeAmplification = 32

// budget is a weighted semaphore over bytes. Holders never block while holding (decoding is
// CPU-only), so waiters always make progress.
type budget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	total int64
	used  int64
}

func (b *budget) init(total int64) {
	b.total = total
	b.cond = sync.NewCond(&b.mu)
}

// acquire reserves n bytes (at most the whole budget) and returns what it reserved.
func (b *budget) acquire(n int64) int64 {
	if n > b.total {
		n = b.total
	}
	b.mu.Lock()
	for b.used+n > b.total {
		b.cond.Wait()
	}
	b.used += n
	b.mu.Unlock()
	return n
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}
