package broker

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/security/sasl"
	"github.com/muster-io/muster/internal/security/tlsconf"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/store"
)

// boundListener is a configured listener with its socket.
type boundListener struct {
	l  *server.Listener
	ln net.Listener
}

// securityMetrics count authentications per listener and mechanism (Kafka's
// successful-authentication-total / failed-authentication-total, and the re-authentication
// ones) and authorization denials per resource type.
type securityMetrics struct {
	auth    *prometheus.CounterVec
	denials *prometheus.CounterVec
}

func newSecurityMetrics() *securityMetrics {
	return &securityMetrics{
		auth: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "muster", Name: "authentications_total",
			Help: "Authentication attempts by listener, mechanism (SSL for TLS handshakes), result (success, failure) and whether they re-authenticated (KIP-368).",
		}, []string{"listener", "mechanism", "result", "reauthentication"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "muster", Name: "authorization_denials_total",
			Help: "Requests or parts of requests denied by the authorizer, by resource type (listing filters not counted).",
		}, []string{"resource_type"}),
	}
}

func (m *securityMetrics) onAuth(listener, mech string, ok, reauth bool) {
	res := "failure"
	if ok {
		res = "success"
	}
	m.auth.WithLabelValues(listener, mech, res, strconv.FormatBool(reauth)).Inc()
}

func (m *securityMetrics) onDenied(rt security.ResourceType) {
	m.denials.WithLabelValues(strings.ToLower(rt.String())).Inc()
}

// setupSecurity opens the security store, the SCRAM credentials and the authorizer.
func (b *Broker) setupSecurity(v *config.Values) error {
	var st security.Store = store.NewSecurityPebble(b.db)
	if b.cl != nil {
		st = b.cl.db.Security() // shared by every node of the cluster
	}
	creds, err := security.NewScramCredentials(st)
	if err != nil {
		return err
	}
	b.creds = creds
	b.authz = security.AllowAll{}
	if security.IsAuthorizerClass(v.String("authorizer.class.name")) {
		std, err := security.NewStandardAuthorizer(security.AuthorizerConfig{
			SuperUsers:                security.ParseSuperUsers(v.String("super.users")),
			AllowEveryoneIfNoACLFound: v.Bool("allow.everyone.if.no.acl.found"),
			Log:                       b.log.With("component", "authorizer"),
			OnDenied:                  b.secMetrics.onDenied,
		}, st)
		if err != nil {
			return err
		}
		b.std, b.authz = std, std
		b.log.Info("authorizer enabled", "acls", std.Count(), "super_users", v.String("super.users"),
			"allow_everyone_if_no_acl_found", v.Bool("allow.everyone.if.no.acl.found"))
	}
	return nil
}

// bindListeners binds every listener: `listeners` from the config, or one PLAINTEXT listener on
// --listen. Giving both is an error naming both.
func (b *Broker) bindListeners(v *config.Values) ([]boundListener, error) {
	if b.opts.Listen != "" && v.IsSet("listeners") {
		return nil, fmt.Errorf("both --listen (%s) and listeners (%s) are set: use one of them", b.opts.Listen, v.String("listeners"))
	}
	eps, err := config.ParseEndpoints(v.String("listeners"))
	if err != nil {
		return nil, fmt.Errorf("listeners: %w", err)
	}
	if len(eps) == 0 {
		addr := b.opts.Listen
		if addr == "" {
			addr = "127.0.0.1:9092"
		}
		host, ps, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("--listen %q: %w", addr, err)
		}
		port, _ := strconv.Atoi(ps)
		eps = []config.Endpoint{{Name: "PLAINTEXT", Host: host, Port: port}}
	}
	pm, err := v.ProtocolMap()
	if err != nil {
		return nil, err
	}
	var ads []config.Endpoint
	if v.IsSet("listeners") {
		ads, _ = config.ParseEndpoints(v.String("advertised.listeners"))
	}
	var out []boundListener
	fail := func(err error) ([]boundListener, error) {
		for _, bl := range out {
			bl.ln.Close()
		}
		return nil, err
	}
	for i, ep := range eps {
		proto, ok := security.ParseProtocol(pm[ep.Name])
		if !ok {
			return fail(fmt.Errorf("listener %s has no security protocol in listener.security.protocol.map", ep.Name))
		}
		ln, err := net.Listen("tcp", ep.Addr())
		if err != nil {
			return fail(fmt.Errorf("listen %s (%s): %w", ep.Addr(), ep.Name, err))
		}
		l := &server.Listener{Name: ep.Name, Protocol: proto}
		out = append(out, boundListener{l: l, ln: ln})
		host, port, err := b.advertisedFor(v, ep.Name, ads, i == 0 && !v.IsSet("listeners"), ln.Addr().String())
		if err != nil {
			return fail(err)
		}
		l.AdvertisedHost, l.AdvertisedPort = host, port
		if err := b.secureListener(v, l); err != nil {
			return fail(err)
		}
	}
	return out, nil
}

// advertisedFor is the endpoint clients of a listener are told: its advertised.listeners entry,
// else the bound address (a wildcard host becomes 127.0.0.1). With --listen, advertised.listeners
// may name its one entry without a listener name.
func (b *Broker) advertisedFor(v *config.Values, name string, ads []config.Endpoint, legacy bool, bound string) (string, int32, error) {
	if legacy {
		return advertised(v, bound)
	}
	for _, a := range ads {
		if a.Name == name {
			return a.Host, int32(a.Port), nil
		}
	}
	return advertised(config.Defaults(), bound)
}

// secureListener sets up TLS and SASL for a listener from its (per-listener) keys.
func (b *Broker) secureListener(v *config.Values, l *server.Listener) error {
	lv := func(k string) string { return v.ListenerValue(l.Name, k) }
	l.FailedAuthDelay = time.Duration(atoi(lv("connection.failed.authentication.delay.ms"))) * time.Millisecond
	l.MaxReauth = time.Duration(atoi(lv("connections.max.reauth.ms"))) * time.Millisecond
	l.MaxSASLReceive = int32(atoi(lv("sasl.server.max.receive.size")))
	l.AuthTimeout = v.Ms("muster.authentication.timeout.ms")
	l.OnAuthentication = b.secMetrics.onAuth
	if l.Protocol.TLS() {
		m, err := tlsconf.New(tlsconf.Settings{
			KeystoreType: lv("ssl.keystore.type"), KeystoreLocation: lv("ssl.keystore.location"),
			KeystorePassword: lv("ssl.keystore.password"), KeyPassword: lv("ssl.key.password"),
			KeystoreChain: lv("ssl.keystore.certificate.chain"), KeystoreKey: lv("ssl.keystore.key"),
			TruststoreType: lv("ssl.truststore.type"), TruststoreLocation: lv("ssl.truststore.location"),
			TruststorePassword: lv("ssl.truststore.password"), TruststoreCerts: lv("ssl.truststore.certificates"),
			ClientAuth: lv("ssl.client.auth"), EnabledProtocols: splitList(lv("ssl.enabled.protocols")),
			CipherSuites: splitList(lv("ssl.cipher.suites")), MappingRules: lv("ssl.principal.mapping.rules"),
			ReloadInterval: time.Duration(atoi(lv("muster.ssl.reload.interval.ms"))) * time.Millisecond,
		}, b.log.With("listener", l.Name))
		if err != nil {
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
		b.tlsManagers = append(b.tlsManagers, m)
		l.TLS = m.Config()
		l.PrincipalFromCert = m.Principal
	}
	if !l.Protocol.SASL() {
		return nil
	}
	names := splitList(lv("sasl.enabled.mechanisms"))
	if len(names) == 0 {
		return fmt.Errorf("listener %s (%s): sasl.enabled.mechanisms is empty", l.Name, l.Protocol)
	}
	for _, n := range names {
		m, err := b.mechanism(v, l.Name, strings.ToUpper(n))
		if err != nil {
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
		l.Mechanisms = append(l.Mechanisms, m)
	}
	return nil
}

func (b *Broker) mechanism(v *config.Values, listener, name string) (sasl.Mechanism, error) {
	switch name {
	case sasl.Plain:
		key := "listener.name." + strings.ToLower(listener) + ".plain.sasl.jaas.config"
		raw := v.MechanismValue(listener, name, "sasl.jaas.config")
		if raw == "" {
			return nil, fmt.Errorf("PLAIN needs its users in %s (PlainLoginModule required user_<name>=\"<password>\" ...;)", key)
		}
		j, err := sasl.ParseJAAS(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if !strings.HasSuffix(j.Class, "PlainLoginModule") {
			return nil, fmt.Errorf("%s: want org.apache.kafka.common.security.plain.PlainLoginModule, got %s", key, j.Class)
		}
		return sasl.NewPlain(j.PlainUsers()), nil
	case sasl.ScramSHA256:
		return sasl.NewScram(security.ScramSHA256, b.creds), nil
	case sasl.ScramSHA512:
		return sasl.NewScram(security.ScramSHA512, b.creds), nil
	case sasl.OAuthBearer:
		lv := func(k string) string { return v.ListenerValue(listener, k) }
		cfg := sasl.OAuthConfig{
			ExpectedAudience: splitList(lv("sasl.oauthbearer.expected.audience")),
			ExpectedIssuer:   lv("sasl.oauthbearer.expected.issuer"),
			SubClaim:         lv("sasl.oauthbearer.sub.claim.name"),
			ClockSkew:        time.Duration(atoi(lv("sasl.oauthbearer.clock.skew.seconds"))) * time.Second,
		}
		if u := lv("sasl.oauthbearer.jwks.endpoint.url"); u != "" {
			j, err := sasl.NewJWKS(u, time.Duration(atoi(lv("sasl.oauthbearer.jwks.endpoint.refresh.ms")))*time.Millisecond)
			if err != nil {
				return nil, err
			}
			cfg.JWKS = j
		} else {
			b.log.Warn("OAUTHBEARER accepts unsecured tokens (no sasl.oauthbearer.jwks.endpoint.url): for development only", "listener", listener)
		}
		return sasl.NewOAuthBearer(cfg), nil
	case sasl.GSSAPI:
		return nil, fmt.Errorf("sasl.enabled.mechanisms: GSSAPI (Kerberos) is not supported; enable PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (Kafka's default for this key is GSSAPI, so a SASL listener must set it)")
	}
	return nil, fmt.Errorf("sasl.enabled.mechanisms: unknown mechanism %s", name)
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
