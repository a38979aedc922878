package security

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn speaks the Kafka framing by hand, for the state-machine and bad-input tests.
type rawConn struct {
	t    testing.TB
	c    net.Conn
	br   *bufio.Reader
	corr int32
}

func dialRaw(t testing.TB, addr string, tlsCfg *tls.Config) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tlsCfg != nil {
		tc := tls.Client(c, tlsCfg)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		c = tc
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

// frame encodes req with a request header.
func (r *rawConn) frame(req kmsg.Request) []byte {
	r.corr++
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(r.corr))
	b = binary.BigEndian.AppendUint16(b, 3)
	b = append(b, "raw"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func (r *rawConn) write(b []byte) error {
	r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := r.c.Write(b)
	return err
}

// readFrame reads one size-prefixed frame.
func (r *rawConn) readFrame(timeout time.Duration) ([]byte, error) {
	r.c.SetReadDeadline(time.Now().Add(timeout))
	var sz [4]byte
	if _, err := io.ReadFull(r.br, sz[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(sz[:]))
	_, err := io.ReadFull(r.br, b)
	return b, err
}

// do sends req and decodes its response.
func (r *rawConn) do(req kmsg.Request) (kmsg.Response, error) {
	if err := r.write(r.frame(req)); err != nil {
		return nil, err
	}
	b, err := r.readFrame(10 * time.Second)
	if err != nil {
		return nil, err
	}
	if int32(binary.BigEndian.Uint32(b)) != r.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", binary.BigEndian.Uint32(b), r.corr)
	}
	b = b[4:]
	resp := req.ResponseKind()
	if resp.IsFlexible() && req.Key() != 18 {
		b = b[1:] // empty tagged fields of the response header
	}
	return resp, resp.ReadFrom(b)
}

// mustDo is do that fails the test on error.
func (r *rawConn) mustDo(req kmsg.Request) kmsg.Response {
	r.t.Helper()
	resp, err := r.do(req)
	if err != nil {
		r.t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// closed reports whether the server closes the connection within timeout without sending
// anything more.
func (r *rawConn) closed(timeout time.Duration) bool {
	r.c.SetReadDeadline(time.Now().Add(timeout))
	_, err := r.br.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

func handshake(v int16, mech string) *kmsg.SASLHandshakeRequest {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = v, mech
	return req
}

func authenticate(v int16, b []byte) *kmsg.SASLAuthenticateRequest {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = v, b
	return req
}

func metadataReq() *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	return req
}
