package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorruptRecord is returned when a stored record cannot be decoded.
var ErrCorruptRecord = errors.New("coordinator: corrupt record")

// Enc appends big-endian primitives in Kafka's classic (non-flexible) encoding. It is used for
// the record types kmsg does not define (consumer and streams group records); layouts are
// documented in docs/records.md.
type Enc struct{ B []byte }

func (e *Enc) Int8(v int8) { e.B = append(e.B, byte(v)) }
func (e *Enc) Bool(v bool) {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
}
func (e *Enc) Int16(v int16) { e.B = binary.BigEndian.AppendUint16(e.B, uint16(v)) }
func (e *Enc) Int32(v int32) { e.B = binary.BigEndian.AppendUint32(e.B, uint32(v)) }
func (e *Enc) Int64(v int64) { e.B = binary.BigEndian.AppendUint64(e.B, uint64(v)) }
func (e *Enc) String(s string) {
	e.Int16(int16(len(s)))
	e.B = append(e.B, s...)
}
func (e *Enc) NullableString(s *string) {
	if s == nil {
		e.Int16(-1)
		return
	}
	e.String(*s)
}
func (e *Enc) Bytes(b []byte) {
	if b == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(b)))
	e.B = append(e.B, b...)
}
func (e *Enc) ArrayLen(n int)  { e.Int32(int32(n)) }
func (e *Enc) UUID(u [16]byte) { e.B = append(e.B, u[:]...) }
func (e *Enc) Strings(ss []string) {
	if ss == nil {
		e.Int32(-1)
		return
	}
	e.ArrayLen(len(ss))
	for _, s := range ss {
		e.String(s)
	}
}
func (e *Enc) Int32s(xs []int32) {
	e.ArrayLen(len(xs))
	for _, x := range xs {
		e.Int32(x)
	}
}

// Dec reads what Enc wrote. Errors are sticky: after the first failure every read returns a zero
// value and Err reports the failure, so decoders check once at the end. Lengths are checked
// against the bytes left, so a corrupt length can never allocate more than the input.
type Dec struct {
	B   []byte
	err error
}

func (d *Dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated %s", ErrCorruptRecord, what)
	}
	d.B = nil
}
func (d *Dec) Err() error { return d.err }
func (d *Dec) Done() error {
	if d.err == nil && len(d.B) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", ErrCorruptRecord, len(d.B))
	}
	return d.err
}
func (d *Dec) take(n int, what string) []byte {
	if n < 0 || len(d.B) < n {
		d.fail(what)
		return nil
	}
	b := d.B[:n]
	d.B = d.B[n:]
	return b
}
func (d *Dec) Int8() int8 {
	if b := d.take(1, "int8"); b != nil {
		return int8(b[0])
	}
	return 0
}
func (d *Dec) Bool() bool { return d.Int8() != 0 }
func (d *Dec) Int16() int16 {
	if b := d.take(2, "int16"); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}
func (d *Dec) Int32() int32 {
	if b := d.take(4, "int32"); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}
func (d *Dec) Int64() int64 {
	if b := d.take(8, "int64"); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}
func (d *Dec) String() string {
	n := d.Int16()
	if n < 0 {
		return ""
	}
	return string(d.take(int(n), "string"))
}

// StringBytes is String without the copy: the bytes alias the input (nil for a negative
// length, read as "" like String).
func (d *Dec) StringBytes() []byte {
	n := d.Int16()
	if n < 0 {
		return nil
	}
	return d.take(int(n), "string")
}
func (d *Dec) NullableString() *string {
	n := d.Int16()
	if n < 0 {
		return nil
	}
	s := string(d.take(int(n), "string"))
	return &s
}
func (d *Dec) Bytes() []byte {
	n := d.Int32()
	if n < 0 {
		return nil
	}
	return append([]byte{}, d.take(int(n), "bytes")...)
}
func (d *Dec) UUID() (u [16]byte) {
	copy(u[:], d.take(16, "uuid"))
	return u
}

// ArrayLen reads an array length and checks that at least minElem bytes per element remain.
func (d *Dec) ArrayLen(minElem int) int {
	n := d.Int32()
	if n < 0 {
		return -1
	}
	if minElem < 1 {
		minElem = 1
	}
	if int64(n)*int64(minElem) > int64(len(d.B)) {
		d.fail("array")
		return 0
	}
	return int(n)
}
func (d *Dec) Strings() []string {
	n := d.ArrayLen(2)
	if n < 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.String()
	}
	return out
}
func (d *Dec) Int32s() []int32 {
	n := d.ArrayLen(4)
	if n <= 0 {
		return []int32{}
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = d.Int32()
	}
	return out
}
