package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn is one TCP connection to a broker driven synchronously by its caller: a request is
// framed with kmsg (request header v1/v2 + body), written, and the caller reads the
// size-prefixed response frame itself. No goroutine, no channel: the load generator costs one
// write and one read system call per request, leaving the CPU to the broker under test.
//
// It is not safe for concurrent use; each workload connection is driven by one goroutine.
type rawConn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
	f    *kmsg.RequestFormatter
	corr int32
	wbuf []byte
	rbuf []byte
	// maxV is the version each API key is sent at: min(versions(), the broker's max); -1 for a
	// key the broker does not serve. Negotiated once, on the first connect.
	maxV map[int16]int16
}

// rawTimeout bounds one round trip whatever the context says.
const rawTimeout = 60 * time.Second

// dialRaw connects to addr and negotiates versions with ApiVersions.
func dialRaw(ctx context.Context, addr string) (*rawConn, error) {
	r := &rawConn{addr: addr, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("muster-bench"))}
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rawConn) connect(ctx context.Context) error {
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", r.addr)
	if err != nil {
		return err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	r.c, r.br = c, bufio.NewReaderSize(c, 64<<10)
	if r.maxV != nil {
		return nil
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "muster-bench", "1.0"
	resp, err := r.roundTrip(ctx, req)
	if err != nil {
		r.close()
		return fmt.Errorf("ApiVersions: %w", err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if err := kerr.ErrorForCode(av.ErrorCode); err != nil {
		r.close()
		return fmt.Errorf("ApiVersions: %w", err)
	}
	want := versions()
	r.maxV = map[int16]int16{}
	for _, k := range av.ApiKeys {
		v, ok := want.LookupMaxKeyVersion(k.ApiKey)
		if !ok {
			continue
		}
		r.maxV[k.ApiKey] = min(v, k.MaxVersion)
	}
	return nil
}

func (r *rawConn) close() {
	if r.c != nil {
		_ = r.c.Close()
		r.c = nil
	}
}

// do sends req at the negotiated version of its key and returns the decoded response. After a
// transport error the connection is closed; the next call reconnects.
func (r *rawConn) do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if r.c == nil {
		if err := r.connect(ctx); err != nil {
			return nil, err
		}
	}
	v, ok := r.maxV[req.Key()]
	if !ok {
		return nil, fmt.Errorf("broker does not serve API key %d", req.Key())
	}
	req.SetVersion(v)
	return r.roundTrip(ctx, req)
}

// roundTrip writes req at its set version and reads its response. A cancelled ctx interrupts a
// blocked read (e.g. a JoinGroup the coordinator holds) by expiring the connection's deadline.
func (r *rawConn) roundTrip(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The socket deadline only catches a hung broker; ctx's own deadline and cancellation
	// act through the AfterFunc below, which fires after ctx.Err() is set, so a request cut
	// off by the end of a case reports ctx's error (not counted) rather than an i/o timeout.
	if err := r.c.SetDeadline(time.Now().Add(rawTimeout)); err != nil {
		r.close()
		return nil, err
	}
	c := r.c
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	resp, err := r.exchange(req)
	stop()
	if err != nil {
		r.close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	return resp, nil
}

func (r *rawConn) exchange(req kmsg.Request) (kmsg.Response, error) {
	r.corr++
	r.wbuf = r.f.AppendRequest(r.wbuf[:0], req, r.corr)
	if _, err := r.c.Write(r.wbuf); err != nil {
		return nil, err
	}
	var sz [4]byte
	if _, err := io.ReadFull(r.br, sz[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(sz[:]))
	if n < 4 || n > 256<<20 {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	if cap(r.rbuf) < n {
		r.rbuf = make([]byte, n)
	}
	body := r.rbuf[:n]
	if _, err := io.ReadFull(r.br, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != r.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, r.corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	// Response header v1 (flexible versions) ends with a tag section; ApiVersions always
	// answers with header v0 (KIP-511) so that old clients can read it.
	if resp.IsFlexible() && req.Key() != 18 {
		var err error
		if body, err = skipTags(body); err != nil {
			return nil, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, err
	}
	return resp, nil
}

// skipTags skips a tagged-field section (uvarint count, then per tag uvarint key, uvarint size,
// data) at the start of b.
func skipTags(b []byte) ([]byte, error) {
	num, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errTruncated
	}
	b = b[n:]
	for ; num > 0; num-- {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errTruncated
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, errTruncated
		}
		b = b[n+int(size):]
	}
	return b, nil
}

var errTruncated = errors.New("truncated response header")
