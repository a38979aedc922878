package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
	"github.com/muster-io/muster/internal/testutil"
)

// TestKIP1331RemoteStoreBodyStaysInTheBrokerLog: when the http plugin's remote store refuses a
// push (413 too large, 400 invalid, 500 transient), the Kafka client gets
// STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED with a message written by muster and nothing of what
// the remote store answered; the remote store's answer goes to the broker log, bounded in size.
func TestKIP1331RemoteStoreBodyStaysInTheBrokerLog(t *testing.T) {
	const secret = "internal-store-detail-4711"
	huge := secret + " " + strings.Repeat("x", 100_000)
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			http.Error(w, huge, int(status.Load()))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)

	logs := &logBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e := &tdEnv{t: t, ctx: ctx, clock: coordtest.NewManualClock(tdStart)}
	e.b = testutil.StartLogged(t, t.TempDir(), e.clock, logs, "group.streams.initial.rebalance.delay.ms=0",
		"group.streams.topology.description.plugin.class=http",
		"group.streams.topology.description.plugin.http.url="+srv.URL)
	e.connect()

	for _, tc := range []struct {
		group  string
		status int
		prefix string
	}{
		{"too-large", http.StatusRequestEntityTooLarge, "TOPOLOGY_DESCRIPTION_TOO_LARGE"},
		{"invalid", http.StatusBadRequest, "INVALID_REQUEST"},
		{"transient", http.StatusInternalServerError, "TOPOLOGY_DESCRIPTION_UPDATE_FAILED"},
	} {
		status.Store(int32(tc.status))
		m := &tdMember{id: "m-" + tc.group}
		e.heartbeat(tc.group, m)
		r := e.push(tc.group, m.id, 0)
		wantCode(t, tc.group+" push", r.ErrorCode, kerr.StreamsTopologyDescriptionUpdateFailed)
		msg := strp(r.ErrorMessage)
		if !strings.HasPrefix(msg, tc.prefix) {
			t.Errorf("%s: message %q does not start with %s", tc.group, msg, tc.prefix)
		}
		if strings.Contains(msg, secret) || strings.Contains(msg, "xxxx") || strings.Contains(msg, "remote store") || len(msg) > 300 {
			t.Errorf("%s: the client's message carries the remote store's answer: %.200q", tc.group, msg)
		}
	}
	logged := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(l, secret) {
			continue
		}
		logged++
		if len(l) > 2048 {
			t.Errorf("a log line carries %d bytes of the remote store's answer", len(l))
		}
	}
	if logged < 3 {
		t.Errorf("the remote store's answers were logged %d times, want 3", logged)
	}
}
