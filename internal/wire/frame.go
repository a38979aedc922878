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

// ReadFrame reads one size-prefixed frame. The body is allocated only after the size has been
// checked against max, so a hostile length field cannot make the server allocate more than max
// bytes. The returned slice is owned by the caller.
func ReadFrame(r io.Reader, max int32) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 0 || n > max {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrFrameTooLarge, n, max)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// AppendFrameSize patches the 4-byte size prefix of a frame built with room for it at dst[start:].
func patchSize(dst []byte, start int) {
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
}
