package testutil

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RawConn is a minimal Kafka connection for load and protocol tests: it frames kmsg requests
// itself (no client library), one request at a time, so thousands of them cost little.
type RawConn struct {
	c    net.Conn
	br   *bufio.Reader
	corr int32
	buf  []byte
}

// DialRaw connects to a broker.
func DialRaw(addr string) (*RawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &RawConn{c: c, br: bufio.NewReaderSize(c, 16<<10)}, nil
}

// Close closes the connection.
func (r *RawConn) Close() error { return r.c.Close() }

// Do sends req at its set version and decodes the response.
func (r *RawConn) Do(req kmsg.Request) (kmsg.Response, error) {
	r.corr++
	b := r.buf[:0]
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(r.corr))
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "load"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	r.buf = b
	if err := r.c.SetDeadline(time.Now().Add(60 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := r.c.Write(b); err != nil {
		return nil, err
	}
	var sz [4]byte
	if _, err := io.ReadFull(r.br, sz[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(r.br, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != r.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, r.corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	if resp.IsFlexible() && req.Key() != 18 {
		if len(body) == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		body = body[1:] // empty response-header tag section
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, err
	}
	return resp, nil
}
