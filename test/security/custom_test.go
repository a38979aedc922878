package security

import (
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

func startCustom(t *testing.T) *testutil.Broker {
	return testutil.Start(t, "listeners=INTERNAL://127.0.0.1:0,CLIENT://127.0.0.1:0",
		"listener.security.protocol.map=INTERNAL:PLAINTEXT,CLIENT:SASL_PLAINTEXT",
		"advertised.listeners=INTERNAL://internal.example:19092,CLIENT://client.example:29092",
		"inter.broker.listener.name=INTERNAL", "sasl.enabled.mechanisms=PLAIN",
		"listener.name.client.plain.sasl.jaas.config="+plainJAAS)
}

// findCoordinator asks the listener at addr (PLAINTEXT, or PLAIN as alice on a SASL listener)
// for a group coordinator and its Metadata broker; both must agree.
func findCoordinator(t *testing.T, addr string) (string, string) {
	t.Helper()
	r := dialRaw(t, addr, nil)
	if av := r.mustDo(handshake(1, "PLAIN")).(*kmsg.SASLHandshakeResponse); av.ErrorCode == 0 {
		r.mustDo(authenticate(1, []byte("\x00alice\x00alice-secret")))
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 4, []string{"g"}
	resp := r.mustDo(fc).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %+v", resp)
	}
	c := resp.Coordinators[0]
	md := r.mustDo(metadataReq()).(*kmsg.MetadataResponse)
	if md.Brokers[0].Host != c.Host || md.Brokers[0].Port != c.Port {
		t.Fatalf("Metadata %s:%d and FindCoordinator %s:%d disagree", md.Brokers[0].Host, md.Brokers[0].Port, c.Host, c.Port)
	}
	return c.Host, strconv.Itoa(int(c.Port))
}
