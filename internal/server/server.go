// Package server is muster's Kafka listener: it accepts connections, reads size-prefixed frames,
// parses request headers, decodes bodies with kmsg, dispatches each request to its handler and
// writes responses in request order. Bad input (an oversized frame, an unknown key or version, a
// malformed header or body) closes only that connection, with a log line saying why.
package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/wire"
)

// Request is what a handler sees of one request.
type Request struct {
	Header     wire.Header
	ClientHost string
	// ClientHostKafka is ClientHost as Kafka reports it in group descriptions ("/" + host),
	// built once per connection.
	ClientHostKafka string
	Body            kmsg.Request
	// Session is who sent the request: the authenticated principal, the client host and the
	// listener (never nil for requests read from a connection).
	Session *security.Session
	// Listener is the listener the request came in on: Metadata, FindCoordinator and
	// DescribeCluster answer with its advertised endpoint (Listener.AdvertisedHost/Port).
	Listener *Listener

	// sequenced is closed by Sequenced (once); nil outside an ordered request's goroutine.
	sequenced chan struct{}
	seqOnce   sync.Once
}

// Sequenced tells the server that the request's ordered part is done (see ordered): the
// connection's next ordered request may start, its effects coming after this one's, while this
// one goes on (a Produce waiting for its WAL sync). Returning from the handler implies it.
func (r *Request) Sequenced() {
	if r.sequenced != nil {
		r.seqOnce.Do(func() { close(r.sequenced) })
	}
}

// Handler serves one API key. It returns the response to send, or nil to send none (Produce with
// acks=0). It may block; responses still leave in request order.
type Handler func(ctx context.Context, r *Request) kmsg.Response

// Options bound the server's resources.
type Options struct {
	// MaxRequestBytes is socket.request.max.bytes.
	MaxRequestBytes int32
	// MaxConnections is muster.max.connections; connections beyond it are closed at accept.
	MaxConnections int
	// MaxInflightBytes is muster.connection.max.inflight.bytes: request bytes one connection may
	// have outstanding before the server stops reading from it. A Fetch also counts the response
	// bytes it may return (responseReserve), so a client that pipelines fetches and does not
	// read cannot make the server hold more than about this much of their responses.
	MaxInflightBytes int64
	// MaxInflightRequests bounds outstanding requests per connection (pipelining depth).
	MaxInflightRequests int
	// MaxDecodeBytes bounds, across all connections, the memory that body decoding may hold at
	// once, counted as DecodeAmplification × body bytes per decode (a decode larger than the
	// whole budget runs alone). Default 1 GiB.
	MaxDecodeBytes int64
	// IdleTimeout closes a connection that, with no request being answered, sends nothing for
	// this long, takes longer than this to send one request frame, or does not take a response
	// for this long (Kafka's connections.max.idle.ms, default 10 minutes); negative disables it.
	IdleTimeout time.Duration
	// Observer, when set, receives the timing of every answered request (request metrics).
	Observer RequestObserver
	// ClusterID and NodeID identify this broker to ApiVersions v5+ (KIP-1242): a client that
	// names another cluster or node is told to rebootstrap.
	ClusterID string
	NodeID    int32
}

// Per-connection buffer sizes. Large frames and responses bypass the buffers, so small ones keep
// an idle connection cheap (a thousand idle connections cost a few MiB, not 128 MiB).
const (
	readBufferSize  = 8 << 10
	writeBufferSize = 8 << 10
	// maxRetainedResponseBuffer: a response encoding buffer larger than this is dropped after
	// use instead of being kept for the connection's next response.
	maxRetainedResponseBuffer = 1 << 20
)

// Stats are live counters (read by the metrics collector).
type Stats struct {
	Connections     atomic.Int64
	ConnectionsOpen atomic.Int64
	Rejected        atomic.Int64
	BadFrames       atomic.Int64
	Requests        [128]atomic.Int64
}

// Server is a Kafka protocol listener.
type Server struct {
	opts     Options
	log      *slog.Logger
	handlers map[int16]Handler
	Stats    Stats

	decodeMem budget
	badLog    logLimiter

	apiKeysOnce sync.Once
	apiKeysList []kmsg.ApiVersionsResponseApiKey // computed at the first ApiVersions

	mu     sync.Mutex
	lns    []net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// New creates a server; register handlers before Serve.
func New(opts Options, log *slog.Logger) *Server {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 100 << 20
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = 10000
	}
	if opts.MaxInflightBytes <= 0 {
		opts.MaxInflightBytes = 100 << 20
	}
	if opts.MaxInflightRequests <= 0 {
		opts.MaxInflightRequests = 128
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 10 * time.Minute
	}
	if opts.MaxDecodeBytes <= 0 {
		opts.MaxDecodeBytes = 1 << 30
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: opts, log: log, handlers: map[int16]Handler{}, conns: map[net.Conn]struct{}{}}
	s.decodeMem.init(opts.MaxDecodeBytes)
	s.handlers[18] = s.apiVersions
	s.handlers[17] = s.saslHandshakeAfterAuth
	s.handlers[36] = s.saslAuthenticateAfterAuth
	return s
}

// Handle registers the handler of an API key. Only keys in wire.Supported are served.
func (s *Server) Handle(key int16, h Handler) {
	if _, ok := wire.Lookup(key); !ok {
		panic(fmt.Sprintf("server: key %d is not in wire.Supported", key))
	}
	s.handlers[key] = h
}

// Serve accepts connections on ln as one PLAINTEXT listener until Close.
func (s *Server) Serve(ln net.Listener) error { return s.ServeListener(ln, defaultListener) }

// ServeListener accepts connections on ln as listener l until Close. Several listeners may be
// served at once; they share the server's handlers and limits.
func (s *Server) ServeListener(ln net.Listener, l *Listener) error {
	s.mu.Lock()
	s.lns = append(s.lns, ln)
	if s.closed { // Close ran before Serve started
		s.mu.Unlock()
		return ln.Close()
	}
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		if len(s.conns) >= s.opts.MaxConnections {
			s.mu.Unlock()
			s.Stats.Rejected.Add(1)
			s.log.Warn("connection limit reached; closing new connection", "remote", c.RemoteAddr().String(), "limit", s.opts.MaxConnections)
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.Stats.Connections.Add(1)
		s.Stats.ConnectionsOpen.Add(1)
		go s.serveConn(c, l)
	}
}

// Close stops accepting, closes every connection and waits for their goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for _, ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

type pending struct {
	hdr  wire.Header
	size int64
	resp kmsg.Response
	done chan struct{}
	// received, started and finished time the request for the Observer (Mono; 0 without one).
	received, started, finished time.Duration
}

func (s *Server) serveConn(raw net.Conn, l *Listener) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, raw)
		s.mu.Unlock()
		s.Stats.ConnectionsOpen.Add(-1)
		raw.Close()
	}()
	remote := raw.RemoteAddr().String()
	host, _, _ := net.SplitHostPort(remote)
	kafkaHost := "/" + host
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := s.log.With("remote", remote)
	c, sess, ok := s.secure(ctx, raw, l, host, log)
	if !ok {
		return
	}
	auth := &connAuth{l: l, host: host, sess: sess}

	queue := make(chan *pending, s.opts.MaxInflightRequests)
	var inflight atomic.Int64
	var unanswered atomic.Int64 // requests read whose response is not yet written
	space := make(chan struct{}, 1)
	writerDone := make(chan struct{})
	// handlers counts the connection's running handlers: the connection ends only after they
	// returned (their context is cancelled first), so nothing of it outlives Server.Close.
	var handlers sync.WaitGroup
	rw := &respWriter{c: c, idle: s.opts.IdleTimeout}
	go func() {
		defer close(writerDone)
		for p := range queue {
			select {
			case <-p.done:
			case <-ctx.Done():
				return
			}
			inflight.Add(-p.size)
			select {
			case space <- struct{}{}:
			default:
			}
			if p.resp == nil {
				unanswered.Add(-1)
				s.observe(p, nil)
				continue
			}
			if err := rw.write(p.hdr, p.resp, false); err != nil {
				cancel()
				return
			}
			unanswered.Add(-1)
			s.observe(p, p.resp)
			if len(queue) == 0 {
				if err := rw.flush(); err != nil {
					cancel()
					return
				}
			}
		}
		rw.flush()
	}()
	defer func() {
		// The reader is done (EOF, bad input or shutdown): cancel in-flight handlers (a long-poll
		// Fetch would otherwise hold the connection open until its MaxWait) and let the writer go.
		cancel()
		close(queue)
		<-writerDone
		handlers.Wait()
	}()

	// lastOrdered is the completion of the connection's latest ordered request (see ordered).
	var lastOrdered chan struct{}
	// readExpires is the read deadline currently set on c.
	var readExpires time.Time
	br := bufio.NewReaderSize(c, readBufferSize)
	if l.Protocol.SASL() && !s.authenticate(c, br, rw, auth, log) {
		return
	}
	for {
		for inflight.Load() > s.opts.MaxInflightBytes {
			select {
			case <-space:
			case <-ctx.Done():
				return
			}
		}
		if s.opts.IdleTimeout > 0 {
			if !s.awaitRequest(c, br, &unanswered, &readExpires) {
				log.Info("closing idle connection", "idle_timeout", s.opts.IdleTimeout)
				return
			}
			// The rest of the frame must follow within the idle timeout too (within 7/8 of it
			// at least: the deadline is re-armed only when less than that is left).
			s.armRead(c, &readExpires, time.Now())
		}
		frame, err := wire.ReadFrame(br, s.opts.MaxRequestBytes)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				log.Info("closing connection: request frame stalled", "idle_timeout", s.opts.IdleTimeout)
				return
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && ctx.Err() == nil {
				s.Stats.BadFrames.Add(1)
				s.warnBadInput(log, "closing connection: bad frame", "err", err)
			}
			return
		}
		var received time.Duration
		if s.opts.Observer != nil {
			received = Mono()
		}
		hdr, body, err := wire.ParseHeader(frame)
		if err != nil {
			s.Stats.BadFrames.Add(1)
			s.warnBadInput(log, "closing connection: bad request header", "err", err)
			return
		}
		req, herr := s.decode(hdr, body)
		if herr != nil {
			if hdr.APIKey == 18 {
				// ApiVersions with a version we do not know: Kafka answers v0 with
				// UNSUPPORTED_VERSION and its key table so the client can retry (KIP-511).
				p := &pending{hdr: hdr, done: make(chan struct{})}
				p.hdr.Flexible = false
				p.resp = s.apiVersionsFallback()
				close(p.done)
				unanswered.Add(1)
				queue <- p
				continue
			}
			s.Stats.BadFrames.Add(1)
			s.warnBadInput(log, "closing connection: "+herr.Error(), "api_key", hdr.APIKey, "api_version", hdr.APIVersion, "correlation_id", hdr.CorrelationID)
			return
		}
		if hdr.APIKey >= 0 && int(hdr.APIKey) < len(s.Stats.Requests) {
			s.Stats.Requests[hdr.APIKey].Add(1)
		}
		if !auth.expiry.IsZero() && hdr.APIKey != 17 && time.Now().After(auth.expiry) {
			log.Info("closing connection: SASL session expired without re-authentication (connections.max.reauth.ms)", "listener", l.Name, "principal", auth.sess.PrincipalString())
			return
		}
		if hdr.APIKey == 17 && l.Protocol.SASL() && l.MaxReauth > 0 && hdr.APIVersion >= 1 {
			if !s.reauthenticate(c, br, rw, auth, hdr, req.(*kmsg.SASLHandshakeRequest), &unanswered, log) {
				return
			}
			readExpires = time.Time{}
			lastOrdered = nil
			continue
		}
		h := s.handlers[hdr.APIKey]
		r := &Request{Header: hdr, ClientHost: host, ClientHostKafka: kafkaHost, Body: req, Session: auth.sess, Listener: l}
		if inline(hdr.APIKey) && unanswered.Load() == 0 {
			// Nothing of this connection is outstanding: handle it here and answer directly.
			resp, ok := s.runInline(ctx, log, h, r)
			if !ok {
				return
			}
			lastOrdered = nil // every earlier request is answered
			var finished time.Duration
			if s.opts.Observer != nil {
				finished = Mono()
			}
			if resp != nil {
				if err := rw.write(hdr, resp, true); err != nil {
					return
				}
			}
			if s.opts.Observer != nil {
				// Handled at once: no queue time.
				s.opts.Observer.ObserveRequest(RequestTiming{Key: hdr.APIKey, Version: hdr.APIVersion, Response: resp,
					Received: received, Started: received, Finished: finished, Sent: Mono()})
			}
			continue
		}
		p := &pending{hdr: hdr, size: int64(len(frame)) + responseReserve(req), done: make(chan struct{}), received: received}
		inflight.Add(p.size)
		unanswered.Add(1)
		select {
		case queue <- p:
		case <-ctx.Done():
			return
		}
		var prev chan struct{}
		if ordered(hdr.APIKey) {
			r.sequenced = make(chan struct{})
			prev, lastOrdered = lastOrdered, r.sequenced
		}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			defer close(p.done)
			defer r.Sequenced()
			if prev != nil {
				select {
				case <-prev:
				case <-ctx.Done():
					return
				}
			}
			defer func() {
				if rec := recover(); rec != nil {
					log.Error("handler panicked; closing connection", "api", kmsg.NameForKey(hdr.APIKey), "panic", rec)
					p.resp = nil
					cancel()
					c.Close()
				}
			}()
			if s.opts.Observer != nil {
				p.started = Mono()
				defer func() { p.finished = Mono() }()
			}
			p.resp = h(ctx, r)
		}()
	}
}

// observe hands a written response's timing to the Observer (if any).
func (s *Server) observe(p *pending, resp kmsg.Response) {
	if s.opts.Observer == nil {
		return
	}
	s.opts.Observer.ObserveRequest(RequestTiming{Key: p.hdr.APIKey, Version: p.hdr.APIVersion, Response: resp,
		Received: p.received, Started: p.started, Finished: p.finished, Sent: Mono()})
}

// awaitRequest waits for the first byte of the client's next request, for at most the idle
// timeout while no request is being answered; a connection with requests still being answered
// (a long JoinGroup, a long-poll Fetch) is not idle. It returns false when the connection is
// idle (or the wait failed for another reason, which the next read reports). The read deadline
// is re-armed only when less than 7/8 of the idle timeout is left (armRead); a deadline that
// fires before the idle timeout has passed since the wait began is re-armed, not obeyed.
func (s *Server) awaitRequest(c net.Conn, br *bufio.Reader, unanswered *atomic.Int64, expires *time.Time) bool {
	if br.Buffered() > 0 {
		return true
	}
	start := time.Now()
	s.armRead(c, expires, start)
	for {
		_, err := br.Peek(1)
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			return true
		}
		now := time.Now()
		if now.Sub(start) < s.opts.IdleTimeout {
			*expires = start.Add(s.opts.IdleTimeout)
			c.SetReadDeadline(*expires)
			continue
		}
		if unanswered.Load() == 0 {
			return false
		}
		start = now
		*expires = now.Add(s.opts.IdleTimeout)
		c.SetReadDeadline(*expires)
	}
}

// armRead sets the read deadline to now + the idle timeout unless the one set leaves at least
// 7/8 of it.
func (s *Server) armRead(c net.Conn, expires *time.Time, now time.Time) {
	if expires.Sub(now) < s.opts.IdleTimeout-s.opts.IdleTimeout/8 {
		*expires = now.Add(s.opts.IdleTimeout)
		c.SetReadDeadline(*expires)
	}
}

// runInline runs handler h for r on the reader goroutine; false means it panicked (logged) and
// the connection must close.
func (s *Server) runInline(ctx context.Context, log *slog.Logger, h Handler, r *Request) (resp kmsg.Response, ok bool) {
	defer func() {
		if rec := recover(); rec != nil {
			log.Error("handler panicked; closing connection", "api", kmsg.NameForKey(r.Header.APIKey), "panic", rec)
			resp, ok = nil, false
		}
	}()
	return h(ctx, r), true
}

// decode validates the key and version against the table and the registered handlers, then
// decodes the body (decodeBody).
func (s *Server) decode(h wire.Header, body []byte) (kmsg.Request, error) {
	if api, ok := wire.Lookup(h.APIKey); !ok || s.handlers[h.APIKey] == nil {
		return nil, fmt.Errorf("unsupported API key %d", h.APIKey)
	} else if h.APIVersion < api.Accepted.Min || h.APIVersion > api.Accepted.Max {
		return nil, fmt.Errorf("unsupported %s version %d (supported %d-%d)", api.Name, h.APIVersion, api.Advertised.Min, api.Advertised.Max)
	}
	cost := s.decodeMem.acquire(int64(len(body)) * DecodeAmplification)
	defer s.decodeMem.release(cost)
	return decodeBody(h, body)
}

// decodeBody decodes a request body with kmsg after checking the key and version against
// wire.Supported's accepted range. Errors describe the key, version and kmsg's complaint.
func decodeBody(h wire.Header, body []byte) (kmsg.Request, error) {
	api, ok := wire.Lookup(h.APIKey)
	if !ok {
		return nil, fmt.Errorf("unsupported API key %d", h.APIKey)
	}
	if h.APIVersion < api.Accepted.Min || h.APIVersion > api.Accepted.Max {
		return nil, fmt.Errorf("unsupported %s version %d (supported %d-%d)", api.Name, h.APIVersion, api.Advertised.Min, api.Advertised.Max)
	}
	req := kmsg.RequestForKey(h.APIKey)
	req.SetVersion(h.APIVersion)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("malformed %s v%d body: %v", api.Name, h.APIVersion, err)
	}
	return req, nil
}

// ordered reports whether requests of an API key must be handled one after another, in arrival
// order, on their connection, as Kafka handles every request (it reads a connection's next
// request only after answering the previous one). One after another means: the next starts
// once the previous returned or called Request.Sequenced (a Produce once its batches have their
// offsets, as Kafka's purgatory lets the next request append while one waits for acks). Produce needs it for idempotent sequence
// numbers and offsets in send order, OffsetCommit and friends so that a later commit of the same
// partition wins. Requests that may wait long by design (Fetch long-polls, JoinGroup and
// SyncGroup waiting for a rebalance) and pure reads run at once, so they never hold up the
// connection's other requests; responses still leave in request order.
func ordered(key int16) bool {
	switch key {
	case 0, // Produce
		8,  // OffsetCommit
		20, // DeleteTopics
		19, // CreateTopics
		21, // DeleteRecords
		22, // InitProducerId
		24, // AddPartitionsToTxn
		25, // AddOffsetsToTxn
		26, // EndTxn
		28, // TxnOffsetCommit
		37, // CreatePartitions
		42, // DeleteGroups
		47, // OffsetDelete
		78, // ShareFetch (share session epochs)
		79, // ShareAcknowledge
		91, // AlterShareGroupOffsets
		92, // DeleteShareGroupOffsets
		93: // StreamsGroupTopologyDescriptionUpdate
		return true
	}
	return false
}

// warnBadInput logs a bad-input line, at most badInputLogLimit per second.
func (s *Server) warnBadInput(log *slog.Logger, msg string, args ...any) {
	ok, suppressed := s.badLog.allow(time.Now())
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed_since_last", suppressed)
	}
	log.Warn(msg, args...)
}
