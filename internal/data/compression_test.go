package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func lz4Bytes(b []byte) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstdBytes(b []byte) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

func snappyBytes(b []byte) []byte { return snappy.Encode(nil, b) }

// xerialBytes frames b the way snappy-java's stream does: header, then
// blocks of at most blockSize input bytes, each a 4-byte length + block.
func xerialBytes(b []byte, blockSize int) []byte {
	out := append([]byte{}, xerialMagic...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(b) > 0 {
		n := min(blockSize, len(b))
		blk := snappy.Encode(nil, b[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
		b = b[n:]
	}
	return out
}

var testCodecs = []struct {
	name  string
	codec int16
	fn    func([]byte) []byte
}{
	{"gzip", codecGzip, gzipBytes},
	{"snappy", codecSnappy, snappyBytes},
	{"snappy-xerial", codecSnappy, func(b []byte) []byte { return xerialBytes(b, 100) }},
	{"lz4", codecLz4, lz4Bytes},
	{"zstd", codecZstd, zstdBytes},
}

// TestListOffsetsCompressed: timestamp and max-timestamp lookups find the
// record inside compressed batches (Kafka decompresses), for every codec.
func TestListOffsetsCompressed(t *testing.T) {
	for _, c := range testCodecs {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.createTopic("z", 1, nil)
			// Offsets 0-9 have ts 1000+10i; offsets 10-19 have ts out of
			// order (5000, 5010, 5020, 5000, 5900, ...), the max at offset 14.
			e.produce("z", 0, makeBatch(batchOpts{n: 10, valSize: 50, ts: 1000, attrs: c.codec, compress: c.fn,
				tsOf: func(i int) int64 { return int64(10 * i) }}))
			e.produce("z", 0, makeBatch(batchOpts{n: 10, valSize: 50, ts: 5000, attrs: c.codec, compress: c.fn,
				tsOf: func(i int) int64 {
					if i == 4 {
						return 900 // the max, at offset 14
					}
					return int64(i % 3 * 10)
				}}))
			cases := []struct{ ts, off, gotTS int64 }{
				{0, 0, 1000},
				{1000, 0, 1000},
				{1001, 1, 1010},
				{1055, 6, 1060},
				{1090, 9, 1090},
				{1091, 10, 5000},
				{5011, 12, 5020},
				{5021, 14, 5900},
				{5900, 14, 5900},
				{5901, -1, -1},
				{-3, 14, 5900},
			}
			for _, tc := range cases {
				sp := listOffset(e, 8, "z", 0, tc.ts)
				if sp.ErrorCode != 0 || sp.Offset != tc.off || sp.Timestamp != tc.gotTS {
					t.Errorf("ts %d: offset %d ts %d, want %d %d", tc.ts, sp.Offset, sp.Timestamp, tc.off, tc.gotTS)
				}
			}
			// The stored batches stay compressed (returned as sent).
			bs := decodeBatches(t, e.fetch("z", 0, 0).RecordBatches)
			if len(bs) != 2 || bs[0].Attributes&attrCompressionMask != c.codec {
				t.Fatalf("fetched %d batches, attrs %x", len(bs), bs[0].Attributes)
			}
		})
	}
}

// TestListOffsetsCompressedLogAppendTime: with LogAppendTime every record
// carries the batch's append time.
func TestListOffsetsCompressedLogAppendTime(t *testing.T) {
	e := newEnv(t)
	e.createTopic("la", 1, map[string]string{cfgTimestampType: timestampLogAppendTime})
	e.produce("la", 0, makeBatch(batchOpts{n: 5, ts: 10, attrs: codecZstd, compress: zstdBytes}))
	now := e.now.UnixMilli()
	if sp := listOffset(e, 8, "la", 0, now); sp.Offset != 0 || sp.Timestamp != now {
		t.Errorf("append time lookup: %+v", sp)
	}
	if sp := listOffset(e, 8, "la", 0, -3); sp.Offset != 0 || sp.Timestamp != now {
		t.Errorf("max timestamp: %+v", sp)
	}
}

// TestListOffsetsCorruptCompressed: a batch whose payload does not
// decompress falls back to the batch's base offset instead of failing.
func TestListOffsetsCorruptCompressed(t *testing.T) {
	e := newEnv(t)
	e.createTopic("bad", 1, nil)
	e.produce("bad", 0, makeBatch(batchOpts{n: 4, ts: 100, attrs: codecGzip,
		compress: func([]byte) []byte { return []byte("definitely not gzip") }}))
	if sp := listOffset(e, 8, "bad", 0, 102); sp.ErrorCode != 0 || sp.Offset != 0 || sp.Timestamp != 103 {
		t.Errorf("fallback: %+v", sp)
	}
}

// TestDecompressBounded: payloads expanding past the limit are refused for
// every codec, and announced sizes are checked before allocating.
func TestDecompressBounded(t *testing.T) {
	const limit = 1 << 20
	big := make([]byte, limit+1)
	for _, c := range testCodecs {
		src := c.fn(big)
		if c.name == "snappy-xerial" {
			src = xerialBytes(big, 64<<10)
		}
		if _, err := decompress(c.codec, src, limit); !errors.Is(err, errDecompressedTooLarge) {
			t.Errorf("%s: err %v, want too large", c.name, err)
		}
		out, err := decompress(c.codec, src, limit+1)
		if err != nil || len(out) != limit+1 {
			t.Errorf("%s: within the limit: %d bytes, %v", c.name, len(out), err)
		}
	}
	// A raw snappy block announcing 4 GiB is refused from its header.
	claim := binary.AppendUvarint(nil, 1<<32-1)
	if _, err := decompress(codecSnappy, append(claim, 0, 0, 0), maxDecompressedBatch); !errors.Is(err, errDecompressedTooLarge) {
		t.Errorf("snappy: huge announced length: %v", err)
	}
	// So is a xerial block doing the same.
	xb := append(append([]byte{}, xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)
	xb = binary.BigEndian.AppendUint32(xb, uint32(len(claim)+3))
	xb = append(append(xb, claim...), 0, 0, 0)
	if _, err := decompress(codecSnappy, xb, maxDecompressedBatch); !errors.Is(err, errDecompressedTooLarge) {
		t.Errorf("xerial: huge announced length: %v", err)
	}
	// A zstd frame declaring a 4 GiB content size (single segment, 4-byte
	// size, then one empty last raw block) is refused by the decoder's bound.
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00}
	if _, err := decompress(codecZstd, frame, maxDecompressedBatch); err == nil {
		t.Error("zstd: huge declared content size accepted")
	}
	// Truncated xerial framing and an unknown codec are errors, not panics.
	if _, err := decompress(codecSnappy, xb[:len(xb)-2], maxDecompressedBatch); err == nil {
		t.Error("truncated xerial accepted")
	}
	if _, err := decompress(7, []byte{1}, maxDecompressedBatch); err == nil {
		t.Error("unknown codec accepted")
	}
}

// FuzzRecordOffsets: any stored-batch bytes, with any codec, decode or fail
// without panicking. Seeds are valid batches of every codec.
func FuzzRecordOffsets(f *testing.F) {
	f.Add(makeBatch(batchOpts{n: 3, valSize: 5, ts: 10}))
	for _, c := range testCodecs {
		f.Add(makeBatch(batchOpts{n: 3, valSize: 5, ts: 10, attrs: c.codec, compress: c.fn}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := readBatchHeader(b)
		if !ok {
			return
		}
		recordOffsets(b, h, func(offset, ts int64) bool { return true })
	})
}
