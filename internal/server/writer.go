package server

import (
	"bufio"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/wire"
)

// respWriter writes one connection's responses. Two goroutines may write: the connection's
// writer goroutine (responses of requests handled concurrently, in request order) and the reader
// goroutine (a request handled inline while nothing else was outstanding, see inline). The
// mutex keeps their bytes apart; the reader only writes when every earlier response has been
// written, so request order holds.
type respWriter struct {
	mu      sync.Mutex
	c       net.Conn
	bw      *bufio.Writer // allocated with the first response
	buf     []byte
	idle    time.Duration // write deadline (the idle timeout); <= 0 = none
	expires time.Time     // the write deadline currently set on c
}

// write encodes resp as the response to h into the buffer and, when flush is set, sends what is
// buffered. The write deadline is refreshed only when less than 7/8 of the idle timeout is left,
// so a busy connection does not re-arm a timer per response; a client that reads nothing is still
// closed between 7/8 and 1 idle timeout after its first blocked write.
func (w *respWriter) write(h wire.Header, resp kmsg.Response, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = wire.AppendResponse(w.buf[:0], h, resp)
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(w.c, writeBufferSize)
	}
	if w.idle > 0 {
		now := time.Now()
		if w.expires.Sub(now) < w.idle-w.idle/8 {
			w.expires = now.Add(w.idle)
			w.c.SetWriteDeadline(w.expires)
		}
	}
	_, err := w.bw.Write(w.buf)
	if cap(w.buf) > maxRetainedResponseBuffer {
		w.buf = nil
	}
	if err == nil && flush {
		err = w.bw.Flush()
	}
	return err
}

// flush sends what is buffered.
func (w *respWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bw == nil {
		return nil
	}
	return w.bw.Flush()
}

// inline reports whether a request of this key is handled on the connection's reader goroutine
// when nothing else of the connection is outstanding: the handler runs at once and its response
// is written directly, saving two goroutine hand-offs per request (a handler goroutine and the
// writer goroutine). Only keys whose handlers finish promptly qualify (they may wait for an
// fsync, never for other clients): the reader reads the connection's next request only after
// answering, as Kafka does for every request. Long waits by design (Fetch long-polls, JoinGroup
// and SyncGroup during a rebalance), calls into a topology description plugin (DeleteGroups,
// key 93) and Produce (whose next request may start while it waits for its WAL sync:
// Request.Sequenced) always run on their own goroutine.
func inline(key int16) bool {
	switch key {
	case 2, // ListOffsets
		3,  // Metadata
		8,  // OffsetCommit
		9,  // OffsetFetch
		10, // FindCoordinator
		12, // Heartbeat
		13, // LeaveGroup
		15, // DescribeGroups
		16, // ListGroups
		17, // SaslHandshake (after authentication: ILLEGAL_SASL_STATE)
		18, // ApiVersions
		22, // InitProducerId
		23, // OffsetForLeaderEpoch
		32, // DescribeConfigs
		36, // SaslAuthenticate (after authentication: ILLEGAL_SASL_STATE)
		47, // OffsetDelete
		60, // DescribeCluster
		68, // ConsumerGroupHeartbeat
		69, // ConsumerGroupDescribe
		88, // StreamsGroupHeartbeat
		89: // StreamsGroupDescribe
		return true
	}
	return false
}
