package broker

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	kplain "github.com/twmb/franz-go/pkg/sasl/plain"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/security/sasl"
	"github.com/muster-io/muster/internal/security/tlsconf"
)

// interBroker is how this node reaches the other nodes of the cluster (transaction markers,
// KIP-890 verification): Kafka's inter-broker listener (KafkaConfig.interBrokerListenerName),
// with that listener's TLS settings and sasl.mechanism.inter.broker.protocol with the
// credentials of the listener's JAAS configuration. Peers are dialled at their endpoint on the
// same listener: the client starts from this node's own endpoint on it, whose Metadata lists
// every node by its endpoint on the listener the request came in on.
type interBroker struct {
	listener  string // upper-case listener name
	mechanism string // "" on a listener without SASL
	user      string // the SASL username (the principal User:<user>)
	seed      string // this node's advertised endpoint on the listener
	opts      []kgo.Opt
}

// interBrokerMechanisms are the mechanisms a node can authenticate to another node with.
var interBrokerMechanisms = []string{sasl.Plain, sasl.ScramSHA256, sasl.ScramSHA512}

// setupInterBroker resolves the inter-broker listener among the bound listeners and builds the
// client options; a setting a node cannot use refuses start-up with a message naming the key.
func (b *Broker) setupInterBroker(v *config.Values) (*interBroker, error) {
	name := v.InterBrokerListener()
	var l *boundListener
	var names []string
	for i := range b.lns {
		names = append(names, b.lns[i].l.Name)
		if b.lns[i].l.Name == name {
			l = &b.lns[i]
		}
	}
	key := "inter.broker.listener.name"
	if v.String(key) == "" {
		key = "security.inter.broker.protocol"
	}
	if l == nil {
		return nil, fmt.Errorf("cluster mode: the inter-broker listener %s (from %s) is not a listener of this node; "+
			"set inter.broker.listener.name to one of %s (nodes send each other transaction markers on it)",
			name, key, strings.Join(names, ", "))
	}
	ib := &interBroker{listener: name,
		seed: net.JoinHostPort(l.l.AdvertisedHost, strconv.Itoa(int(l.l.AdvertisedPort)))}
	lv := func(k string) string { return v.ListenerValue(name, k) }
	if l.l.Protocol.TLS() {
		cfg, err := tlsconf.ClientConfig(tlsconf.Settings{
			KeystoreType: lv("ssl.keystore.type"), KeystoreLocation: lv("ssl.keystore.location"),
			KeystorePassword: lv("ssl.keystore.password"), KeyPassword: lv("ssl.key.password"),
			KeystoreChain: lv("ssl.keystore.certificate.chain"), KeystoreKey: lv("ssl.keystore.key"),
			TruststoreType: lv("ssl.truststore.type"), TruststoreLocation: lv("ssl.truststore.location"),
			TruststorePassword: lv("ssl.truststore.password"), TruststoreCerts: lv("ssl.truststore.certificates"),
			EnabledProtocols: splitList(lv("ssl.enabled.protocols")), CipherSuites: splitList(lv("ssl.cipher.suites")),
		}, lv("ssl.endpoint.identification.algorithm"))
		if err != nil {
			return nil, fmt.Errorf("inter-broker listener %s (TLS client): %w", name, err)
		}
		ib.opts = append(ib.opts, kgo.DialTLSConfig(cfg))
	}
	if !l.l.Protocol.SASL() {
		return ib, nil
	}
	mech := strings.ToUpper(strings.TrimSpace(v.String("sasl.mechanism.inter.broker.protocol")))
	supported := false
	for _, m := range interBrokerMechanisms {
		supported = supported || m == mech
	}
	if !supported {
		return nil, fmt.Errorf("sasl.mechanism.inter.broker.protocol=%s: the inter-broker listener %s is %s and muster's nodes authenticate to each other "+
			"with %s only (Kafka's default is GSSAPI, which muster does not support): set sasl.mechanism.inter.broker.protocol",
			mech, name, l.l.Protocol, strings.Join(interBrokerMechanisms, ", "))
	}
	enabled := false
	for _, m := range splitList(lv("sasl.enabled.mechanisms")) {
		enabled = enabled || strings.EqualFold(m, mech)
	}
	if !enabled {
		return nil, fmt.Errorf("sasl.mechanism.inter.broker.protocol=%s must be included in sasl.enabled.mechanisms of listener %s when SASL is used for inter-broker communication", mech, name)
	}
	jkey := "listener.name." + strings.ToLower(name) + "." + strings.ToLower(mech) + ".sasl.jaas.config"
	raw := v.MechanismValue(name, mech, "sasl.jaas.config")
	if raw == "" {
		return nil, fmt.Errorf("inter-broker SASL %s needs the node's credentials in %s (username=\"...\" password=\"...\")", mech, jkey)
	}
	j, err := sasl.ParseJAAS(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", jkey, err)
	}
	want := "ScramLoginModule"
	if mech == sasl.Plain {
		want = "PlainLoginModule"
	}
	if !strings.HasSuffix(j.Class, want) {
		return nil, fmt.Errorf("%s: want a %s for %s, got %s", jkey, want, mech, j.Class)
	}
	user, pass := j.Options["username"], j.Options["password"]
	if user == "" || pass == "" {
		return nil, fmt.Errorf("inter-broker SASL %s: %s needs username=\"...\" and password=\"...\" (the credentials this node authenticates to other nodes with)", mech, jkey)
	}
	ib.mechanism, ib.user = mech, user
	switch mech {
	case sasl.Plain:
		ib.opts = append(ib.opts, kgo.SASL(kplain.Auth{User: user, Pass: pass}.AsMechanism()))
	case sasl.ScramSHA256:
		ib.opts = append(ib.opts, kgo.SASL(kscram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
	case sasl.ScramSHA512:
		ib.opts = append(ib.opts, kgo.SASL(kscram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
	}
	return ib, nil
}
