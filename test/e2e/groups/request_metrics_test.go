package groups

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// TestRequestMetrics checks Kafka's RequestMetrics as muster exports them: requests by API and
// version, responses, error codes by name (NONE included, one per partition), and the queue,
// local and total time histograms, moved by exactly what a few requests over loopback do.
func TestRequestMetrics(t *testing.T) {
	b := testutil.Start(t)
	addr := b.Addr()
	otTopics(t, addr, map[string]int32{"rm": 3})
	const (
		hbV4      = `muster_requests_received_total{request="Heartbeat",version="4"}`
		hbResp    = `muster_responses_sent_total{request="Heartbeat"}`
		hbUnknown = `muster_request_errors_total{error="UNKNOWN_MEMBER_ID",request="Heartbeat"}`
		hbGroup   = `muster_request_errors_total{error="GROUP_ID_NOT_FOUND",request="Heartbeat"}`
		ocV8      = `muster_requests_received_total{request="OffsetCommit",version="8"}`
		ocNone    = `muster_request_errors_total{error="NONE",request="OffsetCommit"}`
		ocTotal   = `muster_request_total_time_seconds_count{request="OffsetCommit"}`
		ocLocal   = `muster_request_local_time_seconds_count{request="OffsetCommit"}`
		ocQueue   = `muster_request_queue_time_seconds_count{request="OffsetCommit"}`
		ocBucket  = `muster_request_total_time_seconds_bucket{request="OffsetCommit",le="+Inf"}`
	)
	m0 := otMetrics(t, b)
	// Series of every supported API exist from the first scrape (zero-valued).
	for _, name := range []string{hbV4, hbResp, ocV8, ocTotal, ocLocal, ocQueue,
		`muster_requests_received_total{request="StreamsGroupHeartbeat",version="0"}`} {
		if _, ok := m0[name]; !ok {
			t.Errorf("metric %s not exported", name)
		}
	}

	// A Heartbeat of an unknown classic group: Kafka answers UNKNOWN_MEMBER_ID.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "rm-none", "m", 1
	resp := otSend[*kmsg.HeartbeatResponse](t, addr, 4, hb)
	want := map[int16]string{kerr.UnknownMemberID.Code: hbUnknown, kerr.GroupIDNotFound.Code: hbGroup}
	errSeries, ok := want[resp.ErrorCode]
	if !ok {
		t.Fatalf("heartbeat of an unknown group answered %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	// Three partitions committed in one request: three NONE codes, one request.
	otCommit(t, addr, "rm-g", map[string]map[int32]otOffset{"rm": {0: {Offset: 1}, 1: {Offset: 2}, 2: {Offset: 3}}})

	// The server counts a request once its response is written, which may be just after the
	// client read it.
	deltas := map[string]float64{hbV4: 1, hbResp: 1, errSeries: 1, ocV8: 1, ocNone: 3,
		ocTotal: 1, ocLocal: 1, ocQueue: 1, ocBucket: 1}
	var m1 map[string]float64
	moved := func() bool {
		for name, d := range deltas {
			if m1[name]-m0[name] != d {
				return false
			}
		}
		return true
	}
	// A scrape may fall between two series of one observation: wait for all of them.
	deadline := time.Now().Add(10 * time.Second)
	for m1 = otMetrics(t, b); !moved() && time.Now().Before(deadline); m1 = otMetrics(t, b) {
		time.Sleep(20 * time.Millisecond)
	}
	for name, d := range deltas {
		if got := m1[name] - m0[name]; got != d {
			t.Errorf("%s moved by %v, want %v", name, got, d)
		}
	}
	if s := m1[`muster_request_total_time_seconds_sum{request="OffsetCommit"}`]; s <= 0 {
		t.Errorf("OffsetCommit total time sum = %v, want > 0", s)
	}
}
