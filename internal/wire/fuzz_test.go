package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzFrameMax is the frame limit the ReadFrame fuzzer uses: small, so that oversized prefixes
// are common in the corpus.
const fuzzFrameMax = 1 << 20

// FuzzReadFrame feeds arbitrary bytes through a limited reader. ReadFrame must never panic,
// never return a frame above the limit or longer than the bytes available, and never allocate
// much more than the bytes the reader really delivered (whatever the size prefix says).
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 1})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0x0f, 0xff, 0xff, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := io.LimitReader(bytes.NewReader(data), int64(len(data)))
		for i := 0; ; i++ {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			frame, err := ReadFrame(r, fuzzFrameMax)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(2*len(data))+frameChunk+4096 {
				t.Fatalf("frame %d: allocated %d bytes for %d input bytes", i, alloc, len(data))
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(frame) > fuzzFrameMax || len(frame) > len(data) {
				t.Fatalf("frame of %d bytes from %d input bytes (limit %d)", len(frame), len(data), fuzzFrameMax)
			}
		}
	})
}

// TestReadFrameHostileSize: a 2 GiB-1 prefix within the limit followed by a few bytes allocates
// about one chunk, not the announced size, and ends in io.ErrUnexpectedEOF.
func TestReadFrameHostileSize(t *testing.T) {
	in := binary.BigEndian.AppendUint32(nil, 0x7fffffff)
	in = append(in, make([]byte, 1000)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(bytes.NewReader(in), 0x7fffffff)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*frameChunk {
		t.Fatalf("allocated %d bytes for a stalled 2 GiB frame", alloc)
	}
}

// TestReadFrameLarge: a multi-chunk frame round-trips byte for byte.
func TestReadFrameLarge(t *testing.T) {
	body := make([]byte, 5*frameChunk+123)
	for i := range body {
		body[i] = byte(i * 7)
	}
	in := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	in = append(in, 0, 0, 0, 0)
	r := bytes.NewReader(in)
	got, err := ReadFrame(r, 1<<30)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("large frame: err %v, equal %v", err, bytes.Equal(got, body))
	}
	if got, err := ReadFrame(r, 1<<30); err != nil || len(got) != 0 {
		t.Fatalf("empty frame after a large one: %v %d", err, len(got))
	}
	if _, err := ReadFrame(r, 1<<30); !errors.Is(err, io.EOF) {
		t.Fatalf("at end: %v, want io.EOF", err)
	}
}

// FuzzParseHeader: arbitrary frames never panic; a parsed header's body is a suffix of the frame
// and its fields are those at the frame's start.
func FuzzParseHeader(f *testing.F) {
	for _, req := range []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrMetadataRequest(), kmsg.NewPtrJoinGroupRequest()} {
		for _, v := range []int16{0, 1, 3, 4, 9} {
			req.SetVersion(v)
			var b []byte
			b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
			b = binary.BigEndian.AppendUint16(b, uint16(v))
			b = binary.BigEndian.AppendUint32(b, 7)
			b = append(b, 0, 3, 'c', 'l', 'i')
			if req.IsFlexible() {
				b = append(b, 1, 5, 2, 'x', 'y')
			}
			f.Add(req.AppendTo(b))
		}
	}
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0x80})
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0x7f, 0xff})
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := ParseHeader(frame)
		if err != nil {
			if !errors.Is(err, ErrMalformedHeader) {
				t.Fatalf("error %v does not wrap ErrMalformedHeader", err)
			}
			return
		}
		if len(body) > len(frame)-10 || !bytes.Equal(frame[len(frame)-len(body):], body) {
			t.Fatalf("body is not a suffix of the frame")
		}
		if h.APIKey != int16(binary.BigEndian.Uint16(frame)) || h.CorrelationID != int32(binary.BigEndian.Uint32(frame[4:])) {
			t.Fatalf("header fields do not match the frame")
		}
		if h.ClientID != nil && len(*h.ClientID) > len(frame) {
			t.Fatalf("client id longer than the frame")
		}
	})
}
