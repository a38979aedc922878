package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// securityDefs are the listener, TLS, SASL and authorizer keys (Kafka's names and defaults).
// Keys marked listenerOverridable in listenerKeys may also be given per listener as
// listener.name.<lower-case listener name>.<key>.
var securityDefs = []Def{
	{Name: "listener.security.protocol.map", Kind: String, Default: "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", Doc: "listener name → security protocol"},
	{Name: "inter.broker.listener.name", Kind: String, Default: "", Doc: "cluster mode: the listener nodes reach each other on (transaction markers, KIP-890 verification), with its TLS and SASL settings; empty = the listener named after security.inter.broker.protocol"},
	{Name: "security.inter.broker.protocol", Kind: String, Default: "PLAINTEXT", OneOf: []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}, Doc: "cluster mode: without inter.broker.listener.name, nodes reach each other on the listener of this name (set only one of the two)"},
	{Name: "sasl.mechanism.inter.broker.protocol", Kind: String, Default: "GSSAPI", Doc: "cluster mode, SASL inter-broker listener: the mechanism nodes authenticate to each other with (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; GSSAPI is not supported), username and password from listener.name.<l>.<mechanism>.sasl.jaas.config"},
	{Name: "controller.listener.names", Kind: String, Default: "", Doc: "accepted; muster has no separate controller listener"},
	{Name: "process.roles", Kind: String, Default: "", Doc: "accepted; muster is broker and controller in one"},
	{Name: "connections.max.idle.ms", Kind: Long, Default: "600000", Min: i64(-1), Doc: "idle connections (and unfinished SASL handshakes) are closed after this; -1 = never"},

	{Name: "sasl.enabled.mechanisms", Kind: List, Default: "GSSAPI", Doc: "SASL mechanisms of SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (GSSAPI is not supported)"},
	{Name: "sasl.server.max.receive.size", Kind: Int, Default: "524288", Min: i64(1), Doc: "largest SASL token accepted before authentication"},
	{Name: "connections.max.reauth.ms", Kind: Long, Default: "0", Min: i64(0), Doc: "KIP-368: SASL sessions expire after this and clients re-authenticate; 0 = never"},
	{Name: "connection.failed.authentication.delay.ms", Kind: Int, Default: "100", Min: i64(0), Doc: "delay before closing a connection whose authentication failed"},
	{Name: "sasl.server.callback.handler.class", Kind: String, Default: "", Doc: "Java plug-in: must stay unset"},
	{Name: "principal.builder.class", Kind: String, Default: "", Doc: "Java plug-in: only Kafka's DefaultKafkaPrincipalBuilder is accepted"},
	{Name: "sasl.login.callback.handler.class", Kind: String, Default: "", Doc: "client-side; accepted and ignored"},
	{Name: "sasl.oauthbearer.jwks.endpoint.url", Kind: String, Default: "", Doc: "OAUTHBEARER: JWKS URL (https://, http:// or file://) whose keys validate tokens; unset = unsecured tokens (development only)"},
	{Name: "sasl.oauthbearer.jwks.endpoint.refresh.ms", Kind: Long, Default: "3600000", Min: i64(1)},
	{Name: "sasl.oauthbearer.expected.audience", Kind: List, Default: ""},
	{Name: "sasl.oauthbearer.expected.issuer", Kind: String, Default: ""},
	{Name: "sasl.oauthbearer.sub.claim.name", Kind: String, Default: "sub"},
	{Name: "sasl.oauthbearer.scope.claim.name", Kind: String, Default: "scope"},
	{Name: "sasl.oauthbearer.clock.skew.seconds", Kind: Int, Default: "30", Min: i64(0)},
	{Name: "sasl.kerberos.service.name", Kind: String, Default: "", Doc: "accepted and ignored (GSSAPI is not supported)"},

	{Name: "ssl.keystore.type", Kind: String, Default: "JKS", OneOf: []string{"JKS", "PKCS12", "PEM", "jks", "pkcs12", "pem"}, Doc: "PEM or PKCS12 (JKS files are refused at start-up with a clear message)"},
	{Name: "ssl.keystore.location", Kind: String, Default: ""},
	{Name: "ssl.keystore.password", Kind: String, Default: ""},
	{Name: "ssl.key.password", Kind: String, Default: ""},
	{Name: "ssl.keystore.certificate.chain", Kind: String, Default: "", Doc: "PEM certificate chain inline (ssl.keystore.type=PEM)"},
	{Name: "ssl.keystore.key", Kind: String, Default: "", Doc: "PEM private key inline (ssl.keystore.type=PEM)"},
	{Name: "ssl.truststore.type", Kind: String, Default: "JKS", OneOf: []string{"JKS", "PKCS12", "PEM", "jks", "pkcs12", "pem"}},
	{Name: "ssl.truststore.location", Kind: String, Default: ""},
	{Name: "ssl.truststore.password", Kind: String, Default: ""},
	{Name: "ssl.truststore.certificates", Kind: String, Default: "", Doc: "PEM CA certificates inline (ssl.truststore.type=PEM)"},
	{Name: "ssl.client.auth", Kind: String, Default: "none", OneOf: []string{"none", "requested", "required"}},
	{Name: "ssl.enabled.protocols", Kind: List, Default: "TLSv1.2,TLSv1.3", OneOf: []string{"TLSv1.2", "TLSv1.3"}},
	{Name: "ssl.protocol", Kind: String, Default: "TLSv1.3", OneOf: []string{"TLS", "TLSv1.2", "TLSv1.3"}},
	{Name: "ssl.cipher.suites", Kind: List, Default: "", Doc: "TLS 1.2 suites by IANA name; TLS 1.3 suites are not configurable in Go"},
	{Name: "ssl.principal.mapping.rules", Kind: String, Default: "DEFAULT"},
	{Name: "ssl.endpoint.identification.algorithm", Kind: String, Default: "https", Doc: "client side: https = nodes check the host name of the peer's certificate when they dial each other (cluster mode, TLS inter-broker listener); empty = the chain only"},
	{Name: "ssl.keymanager.algorithm", Kind: String, Default: "", Doc: "JVM-only; accepted and ignored"},
	{Name: "ssl.trustmanager.algorithm", Kind: String, Default: "", Doc: "JVM-only; accepted and ignored"},
	{Name: "ssl.provider", Kind: String, Default: "", Doc: "JVM-only; accepted and ignored"},
	{Name: "ssl.secure.random.implementation", Kind: String, Default: "", Doc: "JVM-only; accepted and ignored"},
	{Name: "ssl.engine.factory.class", Kind: String, Default: "", Doc: "Java plug-in: must stay unset"},
	{Name: "ssl.allow.dn.changes", Kind: Bool, Default: "false", Doc: "accepted and ignored"},
	{Name: "ssl.allow.san.changes", Kind: Bool, Default: "false", Doc: "accepted and ignored"},
	{Name: "muster.ssl.reload.interval.ms", Kind: Long, Default: "10000", Min: i64(0), Doc: "muster: how often keystore and truststore files are checked for changes and reloaded; 0 = never"},

	{Name: "muster.authentication.timeout.ms", Kind: Long, Default: "30000", Min: i64(1), Doc: "muster: a new connection must finish its TLS handshake and SASL authentication within this time"},

	{Name: "authorizer.class.name", Kind: String, Default: "", Doc: "org.apache.kafka.metadata.authorizer.StandardAuthorizer (or acl) enables ACLs; empty = everything allowed"},
	{Name: "super.users", Kind: String, Default: "", Doc: "principals that bypass ACLs, separated by ';' (User:admin;User:CN=broker)"},
	{Name: "allow.everyone.if.no.acl.found", Kind: Bool, Default: "false"},
}

// listenerPrefix is the prefix of per-listener keys.
const listenerPrefix = "listener.name."

// saslMechanismKeys are the keys given per listener and mechanism:
// listener.name.<l>.<mechanism lower-case>.<key>.
var saslMechanismKeys = []string{"sasl.jaas.config", "sasl.server.callback.handler.class", "sasl.login.callback.handler.class", "connections.max.reauth.ms", "sasl.server.max.receive.size"}

// listenerOverridable reports whether key may be given as listener.name.<l>.<key>: every ssl.*
// and sasl.* key and connections.max.reauth.ms.
func listenerOverridable(key string) bool {
	return strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl.") || key == "connections.max.reauth.ms" ||
		key == "principal.builder.class" || key == "connection.failed.authentication.delay.ms"
}

// listenerKeyDef resolves a listener.name.<l>.… key to the Def it overrides, or nil. The
// mechanism-scoped JAAS key has no global Def: it is a String.
func listenerKeyDef(name string) *Def {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return nil
	}
	l, key, ok := strings.Cut(rest, ".")
	if !ok || l == "" {
		return nil
	}
	if listenerOverridable(key) {
		if d, ok := defsByName[key]; ok {
			return d
		}
	}
	// <mechanism>.<key>: mechanism names contain dashes, never dots.
	mech, mkey, ok := strings.Cut(key, ".")
	if !ok || mech == "" {
		return nil
	}
	for _, k := range saslMechanismKeys {
		if k == mkey {
			if d, ok := defsByName[k]; ok && k != "sasl.jaas.config" {
				return d
			}
			return &jaasDef
		}
	}
	return nil
}

var jaasDef = Def{Name: "sasl.jaas.config", Kind: String, Doc: "JAAS login module line of a listener and mechanism"}

// ListenerValue is a key's value for one listener: listener.name.<lower(listener)>.<key> when
// set, else the global key's value.
func (v *Values) ListenerValue(listener, key string) string {
	if s, ok := v.raw[listenerPrefix+strings.ToLower(listener)+"."+key]; ok {
		return s
	}
	return v.get(key)
}

// ListenerIsSet reports whether key is set for the listener or globally.
func (v *Values) ListenerIsSet(listener, key string) bool {
	_, ok := v.raw[listenerPrefix+strings.ToLower(listener)+"."+key]
	return ok || v.IsSet(key)
}

// MechanismValue is listener.name.<l>.<mechanism lower-case>.<key> ("" when unset).
func (v *Values) MechanismValue(listener, mechanism, key string) string {
	return v.raw[listenerPrefix+strings.ToLower(listener)+"."+strings.ToLower(mechanism)+"."+key]
}

// InterBrokerListener is the (upper-case) name of the listener nodes reach each other on, as
// Kafka's KafkaConfig.interBrokerListenerName: inter.broker.listener.name when set, else the
// listener named after security.inter.broker.protocol (ListenerName.forSecurityProtocol).
func (v *Values) InterBrokerListener() string {
	if ib := strings.TrimSpace(v.String("inter.broker.listener.name")); ib != "" {
		return strings.ToUpper(ib)
	}
	return strings.ToUpper(strings.TrimSpace(v.String("security.inter.broker.protocol")))
}

// Endpoint is one entry of listeners or advertised.listeners: NAME://host:port.
type Endpoint struct {
	Name string // upper-case listener name
	Host string // "" = every interface
	Port int
}

// Addr is host:port.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// ParseEndpoints parses a listeners-style list, "NAME://host:port,…" (IPv6 hosts in brackets).
// Names are upper-cased (Kafka's ListenerName.normalised) and must be unique.
func ParseEndpoints(s string) ([]Endpoint, error) {
	var out []Endpoint
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, addr, ok := strings.Cut(part, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want NAME://host:port", part)
		}
		host, ps, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%q: want NAME://host:port", part)
		}
		port, err := strconv.Atoi(ps)
		if err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("%q: bad port", part)
		}
		name = strings.ToUpper(name)
		if seen[name] {
			return nil, fmt.Errorf("listener name %s is given twice", name)
		}
		seen[name] = true
		out = append(out, Endpoint{Name: name, Host: host, Port: port})
	}
	return out, nil
}

// ProtocolMap parses listener.security.protocol.map ("NAME:PROTOCOL,…"), names upper-cased.
func (v *Values) ProtocolMap() (map[string]string, error) {
	m := map[string]string{}
	for _, part := range splitList(v.String("listener.security.protocol.map")) {
		name, proto, ok := strings.Cut(part, ":")
		proto = strings.ToUpper(strings.TrimSpace(proto))
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("listener.security.protocol.map entry %q: want NAME:PROTOCOL", part)
		}
		switch proto {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			return nil, fmt.Errorf("listener.security.protocol.map entry %q: unknown security protocol %s", part, proto)
		}
		m[strings.ToUpper(strings.TrimSpace(name))] = proto
	}
	return m, nil
}

// listenerChecks validates listeners, advertised.listeners, the protocol map and the listener
// names other keys refer to.
func (v *Values) listenerChecks() []string {
	var p []string
	pm, err := v.ProtocolMap()
	if err != nil {
		p = append(p, err.Error())
	}
	ls, err := ParseEndpoints(v.String("listeners"))
	if err != nil {
		p = append(p, "listeners: "+err.Error())
	}
	names := map[string]bool{}
	for _, l := range ls {
		names[l.Name] = true
		if _, ok := pm[l.Name]; !ok && pm != nil {
			p = append(p, fmt.Sprintf("listeners: listener %s has no security protocol; add %s:<PROTOCOL> to listener.security.protocol.map", l.Name, l.Name))
		}
	}
	if al := v.String("advertised.listeners"); al != "" {
		if len(ls) == 0 {
			// One PLAINTEXT listener from --listen: entries may omit the name.
			for _, part := range splitList(al) {
				addr := part
				if i := strings.Index(addr, "://"); i >= 0 {
					addr = addr[i+3:]
				}
				host, port, err := net.SplitHostPort(addr)
				if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 || host == "" {
					p = append(p, fmt.Sprintf("advertised.listeners=%q: want [PLAINTEXT://]host:port[,...]", al))
					break
				}
			}
		} else if ads, err := ParseEndpoints(al); err != nil {
			p = append(p, "advertised.listeners: "+err.Error())
		} else {
			for _, a := range ads {
				if !names[a.Name] {
					p = append(p, fmt.Sprintf("advertised.listeners: %s is not in listeners", a.Name))
				}
				if a.Host == "" {
					p = append(p, fmt.Sprintf("advertised.listeners: %s needs a host", a.Name))
				}
			}
		}
	}
	if ib := v.String("inter.broker.listener.name"); ib != "" && len(ls) > 0 && !names[strings.ToUpper(ib)] {
		p = append(p, fmt.Sprintf("inter.broker.listener.name=%s is not in listeners", ib))
	}
	if v.String("inter.broker.listener.name") != "" && v.IsSet("security.inter.broker.protocol") {
		p = append(p, "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set")
	}
	for _, k := range []string{"sasl.server.callback.handler.class", "ssl.engine.factory.class"} {
		if v.String(k) != "" {
			p = append(p, k+": Java plug-ins cannot be loaded by muster; remove the key")
		}
	}
	if pb := v.String("principal.builder.class"); pb != "" && pb != "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder" {
		p = append(p, "principal.builder.class: only org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder is supported (use ssl.principal.mapping.rules)")
	}
	for k, val := range v.raw {
		if strings.HasPrefix(k, listenerPrefix) && strings.HasSuffix(k, ".sasl.server.callback.handler.class") && val != "" &&
			!strings.HasSuffix(val, "OAuthBearerValidatorCallbackHandler") && !strings.HasSuffix(val, "OAuthBearerUnsecuredValidatorCallbackHandler") {
			p = append(p, k+": Java plug-ins cannot be loaded by muster; remove the key")
		}
	}
	switch a := v.String("authorizer.class.name"); a {
	case "", "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer", "acl":
	default:
		p = append(p, fmt.Sprintf("authorizer.class.name=%q: want org.apache.kafka.metadata.authorizer.StandardAuthorizer (or acl)", a))
	}
	return p
}
