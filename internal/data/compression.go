package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Record batch compression codecs (attributes bits 0–2), per Kafka's
// CompressionType.
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLz4    = 3
	codecZstd   = 4
)

// maxDecompressedBatch bounds the decompressed records of one stored batch
// (64 MiB). The broker only decompresses to locate records (ListOffsets by
// timestamp); a batch that would expand beyond this is treated as
// undecodable, so a corrupt or hostile batch cannot make it allocate without
// limit.
const maxDecompressedBatch = 64 << 20

var errDecompressedTooLarge = fmt.Errorf("data: decompressed batch exceeds %d bytes", maxDecompressedBatch)

// xerialMagic starts a snappy payload framed by the Java snappy-java stream
// (Kafka's Java producer writes this): the magic, a 4-byte version and a
// 4-byte minimum compatible version, then blocks of a big-endian 4-byte
// length and a raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
)

// zstdDecoder is one shared decoder (DecodeAll is safe for concurrent use)
// that refuses frames expanding beyond maxDecompressedBatch.
func zstdDecoder() (*zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(maxDecompressedBatch),
			zstd.WithDecoderMaxWindow(maxDecompressedBatch),
		)
	})
	return zstdDec, zstdErr
}

// decompress returns the decompressed form of a batch's records section
// (src, everything after the 61-byte header) for codec (gzip, snappy — raw
// or xerial-framed —, lz4 frame, zstd). Errors: an unknown codec, malformed
// input, or output beyond limit bytes (errDecompressedTooLarge); limit is at
// most maxDecompressedBatch.
func decompress(codec int16, src []byte, limit int) ([]byte, error) {
	limit = min(limit, maxDecompressedBatch)
	switch codec {
	case codecNone:
		return src, nil
	case codecGzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return readBounded(r, limit)
	case codecSnappy:
		return decompressSnappy(src, limit)
	case codecLz4:
		return readBounded(lz4.NewReader(bytes.NewReader(src)), limit)
	case codecZstd:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(src, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) || len(out) > limit {
			return nil, errDecompressedTooLarge
		}
		return out, err
	}
	return nil, fmt.Errorf("data: unknown compression codec %d", codec)
}

// readBounded reads r to EOF, failing past limit bytes.
func readBounded(r io.Reader, limit int) ([]byte, error) {
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, errDecompressedTooLarge
	}
	return out.Bytes(), nil
}

// decompressSnappy decodes a raw snappy block or a xerial-framed stream,
// checking each block's announced length before allocating.
func decompressSnappy(src []byte, limit int) ([]byte, error) {
	if len(src) < xerialHeaderLen || !bytes.HasPrefix(src, xerialMagic) {
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n > limit {
			return nil, errDecompressedTooLarge
		}
		return snappy.Decode(nil, src)
	}
	var out []byte
	rest := src[xerialHeaderLen:]
	for len(rest) > 0 {
		if len(rest) < 4 {
			return nil, errors.New("data: truncated xerial snappy block length")
		}
		size := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(size) > uint64(len(rest)) {
			return nil, errors.New("data: truncated xerial snappy block")
		}
		block := rest[:size]
		rest = rest[size:]
		n, err := snappy.DecodedLen(block)
		if err != nil {
			return nil, err
		}
		if len(out)+n > limit {
			return nil, errDecompressedTooLarge
		}
		start := len(out)
		out = append(out, make([]byte, n)...)
		if _, err := snappy.Decode(out[start:], block); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var (
	zstdEncOnce sync.Once
	zstdEnc     *zstd.Encoder
	zstdEncErr  error
)

// compress compresses a batch's records section with codec, as the log cleaner does when it
// rewrites a compressed batch (Kafka keeps a batch's codec). Snappy is written xerial-framed
// (as Kafka's Java producer writes it) when xerial, else as one raw block.
func compress(codec int16, src []byte, xerial bool) ([]byte, error) {
	switch codec {
	case codecNone:
		return src, nil
	case codecGzip:
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	case codecSnappy:
		if !xerial {
			return snappy.Encode(nil, src), nil
		}
		out := append([]byte(nil), xerialMagic...)
		out = binary.BigEndian.AppendUint32(out, 1) // version
		out = binary.BigEndian.AppendUint32(out, 1) // minimum compatible version
		for len(src) > 0 {
			n := min(len(src), xerialBlockSize)
			block := snappy.Encode(nil, src[:n])
			out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
			out = append(out, block...)
			src = src[n:]
		}
		return out, nil
	case codecLz4:
		var out bytes.Buffer
		w := lz4.NewWriter(&out)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	case codecZstd:
		zstdEncOnce.Do(func() {
			zstdEnc, zstdEncErr = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		})
		if zstdEncErr != nil {
			return nil, zstdEncErr
		}
		return zstdEnc.EncodeAll(src, nil), nil
	}
	return nil, fmt.Errorf("data: unknown compression codec %d", codec)
}

// xerialBlockSize is the uncompressed size of one xerial snappy block (snappy-java's default).
const xerialBlockSize = 32 << 10

// isXerial reports whether a snappy records section is xerial-framed.
func isXerial(src []byte) bool {
	return len(src) >= xerialHeaderLen && bytes.HasPrefix(src, xerialMagic)
}
