package coordtest

import (
	"encoding/binary"
	"sync/atomic"
)

// SeqIDs is a deterministic coordinator.IDSource: the n-th UUID holds n in its last eight bytes.
// It is safe for several shards at once.
type SeqIDs struct{ n atomic.Uint64 }

// NewUUID implements coordinator.IDSource.
func (s *SeqIDs) NewUUID() [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[8:], s.n.Add(1))
	return b
}
