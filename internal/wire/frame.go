// Package wire is muster's Kafka framing: size-prefixed frames, request header parsing (v0–v2,
// KIP-482 tagged fields) and response header encoding (v0/v1). Message bodies are kmsg's; this
// package never decodes a body itself.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFrameTooLarge is returned for a size prefix above the limit (socket.request.max.bytes) or
// below zero. Kafka closes the connection in this case; so does muster.
var ErrFrameTooLarge = errors.New("wire: frame size outside [0, socket.request.max.bytes]")

// frameChunk is the most ReadFrame allocates ahead of bytes actually received.
const frameChunk = 64 << 10

// ReadFrame reads one size-prefixed frame. The size is checked against max before anything is
// allocated, and the body buffer grows only as bytes arrive (64 KiB first, then doubling): a
// hostile length field, or a client that announces a large frame and stalls, costs at most
// 64 KiB plus about twice the bytes it really sent, never max. The returned slice is owned by
// the caller. A short read returns io.ErrUnexpectedEOF (io.EOF only before the size prefix).
func ReadFrame(r io.Reader, max int32) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 0 || n > max {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrFrameTooLarge, n, max)
	}
	return readBody(r, int(n))
}

// readBody reads exactly n bytes, allocating in chunks as they arrive.
func readBody(r io.Reader, n int) ([]byte, error) {
	first := min(n, frameChunk)
	buf := make([]byte, first)
	for {
		done := len(buf) - first
		if _, err := io.ReadFull(r, buf[done:]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(buf) == n {
			return buf, nil
		}
		// Grow by what was already received (doubling) but at least one chunk, capped at n.
		first = min(n-len(buf), max(len(buf), frameChunk))
		buf = append(buf, make([]byte, first)...)
	}
}

// AppendFrameSize patches the 4-byte size prefix of a frame built with room for it at dst[start:].
func patchSize(dst []byte, start int) {
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
}
