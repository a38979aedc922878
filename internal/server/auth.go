package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/security/sasl"
	"github.com/muster-io/muster/internal/wire"
)

// connAuth is a connection's security state: its listener, its current session and, with
// KIP-368 re-authentication, when that session expires.
type connAuth struct {
	l      *Listener
	host   string
	sess   *security.Session
	mech   string    // the SASL mechanism that authenticated the session
	expiry time.Time // zero: the session does not expire
}

// secure runs the TLS handshake of a TLS listener within the authentication timeout and returns
// the connection to serve and its initial session: User:ANONYMOUS, or on an SSL listener the
// principal mapped from a verified client certificate. false: the handshake failed (a
// plaintext client on a TLS port, a bad or missing client certificate) and c must be closed.
func (s *Server) secure(ctx context.Context, c net.Conn, l *Listener, host string, log *slog.Logger) (net.Conn, *security.Session, bool) {
	principal := security.Anonymous
	if l.TLS != nil {
		tc := tls.Server(c, l.TLS)
		c.SetDeadline(s.authDeadline(l))
		err := tc.HandshakeContext(ctx)
		c.SetDeadline(time.Time{})
		if err != nil {
			l.authenticated("SSL", false, false)
			s.warnBadInput(log, "closing connection: TLS handshake failed", "listener", l.Name, "err", err)
			return nil, nil, false
		}
		if l.Protocol == security.SSL {
			l.authenticated("SSL", true, false)
			if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 && l.PrincipalFromCert != nil {
				name, err := l.PrincipalFromCert(certs[0])
				if err != nil {
					s.warnBadInput(log, "closing connection: no principal for the client certificate", "listener", l.Name, "err", err)
					return nil, nil, false
				}
				principal = security.User(name)
			}
		}
		c = tc
	}
	return c, security.NewSession(principal, host, l.Name, l.Protocol, ""), true
}

// saslState is where a SASL exchange stands (Kafka's SaslServerAuthenticator states).
type saslState int

const (
	saslInitial   saslState = iota // ApiVersions or SaslHandshake expected
	saslHandshake                  // SaslHandshake expected
	saslAuthenticate
)

// authenticate runs a SASL listener's exchange before any other request is served:
// ApiVersions (once, first) and SaslHandshake, then the mechanism's tokens, wrapped in
// SaslAuthenticate (handshake v1) or raw and size-prefixed (v0). Frames are limited to
// sasl.server.max.receive.size and the whole exchange to the authentication timeout. A failure
// is answered with Kafka's code where the protocol allows it, then the connection closes (after
// connection.failed.authentication.delay.ms). true: authenticated, st.sess is the session.
func (s *Server) authenticate(c net.Conn, br *bufio.Reader, rw *respWriter, st *connAuth, log *slog.Logger) bool {
	l := st.l
	c.SetReadDeadline(s.authDeadline(l))
	defer c.SetReadDeadline(time.Time{})
	state := saslInitial
	var conv sasl.Conversation
	var mechName string
	for {
		frame, err := wire.ReadFrame(br, s.maxSASLReceive(l))
		if err != nil {
			s.authReadFailed(log, l, mechName, err)
			return false
		}
		hdr, body, err := wire.ParseHeader(frame)
		if err != nil {
			s.Stats.BadFrames.Add(1)
			s.warnBadInput(log, "closing connection: not a Kafka request during SASL authentication (GSSAPI is not supported)", "listener", l.Name)
			return false
		}
		switch {
		case hdr.APIKey == 18 && state == saslInitial:
			req, err := s.decode(hdr, body)
			var resp kmsg.Response
			if err != nil {
				hdr.Flexible = false
				resp = s.apiVersionsFallback()
			} else {
				resp = s.apiVersions(context.Background(), &Request{Header: hdr, Body: req})
			}
			if rw.write(hdr, resp, true) != nil {
				return false
			}
			state = saslHandshake
		case hdr.APIKey == 17 && state != saslAuthenticate:
			req, err := s.decode(hdr, body)
			if err != nil {
				s.warnBadInput(log, "closing connection: "+err.Error(), "listener", l.Name)
				return false
			}
			hs := req.(*kmsg.SASLHandshakeRequest)
			resp := hs.ResponseKind().(*kmsg.SASLHandshakeResponse)
			resp.SupportedMechanisms = l.mechanismNames()
			mech := l.mechanism(hs.Mechanism)
			if mech == nil {
				resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
				rw.write(hdr, resp, true)
				l.authenticated(hs.Mechanism, false, false)
				log.Info("closing connection: unsupported SASL mechanism", "listener", l.Name, "mechanism", hs.Mechanism, "enabled", strings.Join(resp.SupportedMechanisms, ","))
				s.failedAuthDelay(l)
				return false
			}
			if rw.write(hdr, resp, true) != nil {
				return false
			}
			mechName, conv = mech.Name(), mech.Start()
			if hs.Version == 0 {
				return s.rawTokens(c, br, st, conv, mechName, log)
			}
			state = saslAuthenticate
		case hdr.APIKey == 36 && state == saslAuthenticate:
			req, err := s.decode(hdr, body)
			if err != nil {
				s.warnBadInput(log, "closing connection: "+err.Error(), "listener", l.Name)
				l.authenticated(mechName, false, false)
				return false
			}
			ok, done := s.saslAuthenticateStep(hdr, req.(*kmsg.SASLAuthenticateRequest), rw, st, conv, mechName, false, log)
			if !ok {
				return false
			}
			if done {
				return true
			}
		default:
			s.warnBadInput(log, "closing connection: unexpected request during SASL authentication", "listener", l.Name,
				"api", kmsg.NameForKey(hdr.APIKey), "api_key", hdr.APIKey)
			if mechName != "" {
				l.authenticated(mechName, false, false)
			}
			return false
		}
	}
}

// saslAuthenticateStep feeds one SaslAuthenticate to the conversation and answers it. ok false:
// the authentication failed (answered with SASL_AUTHENTICATION_FAILED) and the connection must
// close; done: the client is authenticated and st holds its session.
func (s *Server) saslAuthenticateStep(hdr wire.Header, req *kmsg.SASLAuthenticateRequest, rw *respWriter, st *connAuth,
	conv sasl.Conversation, mech string, reauth bool, log *slog.Logger) (ok, done bool) {
	l := st.l
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	out, done, err := conv.Step(req.SASLAuthBytes)
	if err == nil && done && reauth && conv.AuthorizationID() != st.sess.Principal.Name {
		err = &sasl.AuthError{Msg: "Cannot change principals during re-authentication from " + st.sess.PrincipalString() + " to User:" + conv.AuthorizationID()}
	}
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := sasl.GenericFailure(mech)
		var ae *sasl.AuthError
		if errors.As(err, &ae) {
			msg = ae.Msg
		}
		resp.ErrorMessage = &msg
		l.authenticated(mech, false, reauth) // counted before the client can see the answer
		rw.write(hdr, resp, true)
		log.Info("SASL authentication failed; closing connection", "listener", l.Name, "mechanism", mech, "reason", msg, "reauthentication", reauth)
		s.failedAuthDelay(l)
		return false, false
	}
	resp.SASLAuthBytes = out
	if done {
		resp.SessionLifetimeMillis = st.complete(conv, mech)
	}
	if rw.write(hdr, resp, true) != nil {
		return false, false
	}
	if done {
		l.authenticated(mech, true, reauth)
	}
	return true, done
}

// complete installs the session a finished conversation authenticated and returns its lifetime
// in milliseconds for SaslAuthenticate v1+ (0 without re-authentication): the lesser of
// connections.max.reauth.ms and the credential's remaining validity.
func (st *connAuth) complete(conv sasl.Conversation, mech string) int64 {
	st.mech = mech
	st.sess = security.NewSession(security.User(conv.AuthorizationID()), st.host, st.l.Name, st.l.Protocol, mech)
	st.expiry = time.Time{}
	if st.l.MaxReauth <= 0 {
		return 0
	}
	now := time.Now()
	exp := now.Add(st.l.MaxReauth)
	if e := conv.Expiry(); !e.IsZero() && e.Before(exp) {
		exp = e
	}
	st.expiry = exp
	return max(exp.Sub(now).Milliseconds(), 1)
}

// rawTokens runs a SaslHandshake v0 exchange: size-prefixed raw tokens both ways, no Kafka
// headers. A failure cannot be reported in this framing: the connection closes.
func (s *Server) rawTokens(c net.Conn, br *bufio.Reader, st *connAuth, conv sasl.Conversation, mech string, log *slog.Logger) bool {
	l := st.l
	for {
		token, err := wire.ReadFrame(br, s.maxSASLReceive(l))
		if err != nil {
			s.authReadFailed(log, l, mech, err)
			return false
		}
		out, done, err := conv.Step(token)
		if err != nil {
			l.authenticated(mech, false, false)
			log.Info("SASL authentication failed (handshake v0); closing connection", "listener", l.Name, "mechanism", mech, "reason", err.Error())
			s.failedAuthDelay(l)
			return false
		}
		frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(out)), uint32(len(out)))
		if _, err := c.Write(append(frame, out...)); err != nil {
			return false
		}
		if done {
			st.complete(conv, mech)
			l.authenticated(mech, true, false)
			return true
		}
	}
}

// reauthenticate runs a KIP-368 re-authentication in the middle of a connection: the client sent
// SaslHandshake v1+ after authenticating. It waits until the connection's earlier requests are
// answered, then runs the handshake and SaslAuthenticate exchange synchronously with the same
// mechanism; the principal must not change. false: the connection must close.
func (s *Server) reauthenticate(c net.Conn, br *bufio.Reader, rw *respWriter, st *connAuth, hdr wire.Header,
	hs *kmsg.SASLHandshakeRequest, unanswered *atomic.Int64, log *slog.Logger) bool {
	l := st.l
	for unanswered.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
	if err := rw.flush(); err != nil {
		return false
	}
	resp := hs.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = l.mechanismNames()
	mech := l.mechanism(hs.Mechanism)
	if mech == nil || mech.Name() != st.mech {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		rw.write(hdr, resp, true)
		l.authenticated(hs.Mechanism, false, true)
		log.Info("closing connection: re-authentication must keep the SASL mechanism", "listener", l.Name, "was", st.mech, "requested", hs.Mechanism)
		return false
	}
	if rw.write(hdr, resp, true) != nil {
		return false
	}
	conv := mech.Start()
	c.SetReadDeadline(time.Now().Add(l.authTimeout()))
	defer c.SetReadDeadline(time.Time{})
	for {
		frame, err := wire.ReadFrame(br, s.maxSASLReceive(l))
		if err != nil {
			s.authReadFailed(log, l, mech.Name(), err)
			return false
		}
		h, body, err := wire.ParseHeader(frame)
		if err != nil || h.APIKey != 36 {
			s.warnBadInput(log, "closing connection: expected SaslAuthenticate during re-authentication", "listener", l.Name)
			return false
		}
		req, err := s.decode(h, body)
		if err != nil {
			s.warnBadInput(log, "closing connection: "+err.Error(), "listener", l.Name)
			return false
		}
		ok, done := s.saslAuthenticateStep(h, req.(*kmsg.SASLAuthenticateRequest), rw, st, conv, mech.Name(), true, log)
		if !ok {
			return false
		}
		if done {
			return true
		}
	}
}

// authDeadline is when a new connection's TLS handshake or SASL exchange must be done: the
// authentication timeout, or connections.max.idle.ms when shorter.
func (s *Server) authDeadline(l *Listener) time.Time {
	d := l.authTimeout()
	if s.opts.IdleTimeout > 0 && s.opts.IdleTimeout < d {
		d = s.opts.IdleTimeout
	}
	return time.Now().Add(d)
}

func (s *Server) maxSASLReceive(l *Listener) int32 {
	if l.MaxSASLReceive > 0 {
		return l.MaxSASLReceive
	}
	return 524288
}

func (s *Server) failedAuthDelay(l *Listener) {
	if l.FailedAuthDelay > 0 {
		time.Sleep(l.FailedAuthDelay)
	}
}

// authReadFailed logs why reading during authentication failed: the timeout, an oversize token,
// or the client going away.
func (s *Server) authReadFailed(log *slog.Logger, l *Listener, mech string, err error) {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		log.Info("closing connection: SASL authentication did not complete in time", "listener", l.Name)
	case errors.Is(err, wire.ErrFrameTooLarge):
		s.Stats.BadFrames.Add(1)
		s.warnBadInput(log, "closing connection: SASL frame larger than sasl.server.max.receive.size", "listener", l.Name, "err", err)
	default:
		return
	}
	if mech != "" {
		l.authenticated(mech, false, false)
	}
}

// saslHandshakeAfterAuth answers SaslHandshake on a connection that is not authenticating (a
// non-SASL listener, or an authenticated session without re-authentication): ILLEGAL_SASL_STATE;
// the connection stays open (KafkaApis.handleSaslHandshakeRequest).
func (s *Server) saslHandshakeAfterAuth(_ context.Context, r *Request) kmsg.Response {
	resp := r.Body.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	if r.Listener != nil {
		resp.SupportedMechanisms = r.Listener.mechanismNames()
	}
	return resp
}

// saslAuthenticateAfterAuth answers SaslAuthenticate outside an exchange: ILLEGAL_SASL_STATE.
func (s *Server) saslAuthenticateAfterAuth(_ context.Context, r *Request) kmsg.Response {
	resp := r.Body.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	msg := "SaslAuthenticate request received after successful authentication"
	resp.ErrorMessage = &msg
	return resp
}
