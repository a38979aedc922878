package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/testutil"
)

// shareSetup starts a broker, creates a 1-partition topic with n records and sets the group to
// start at the earliest offset; it returns the topic id.
func shareSetup(t *testing.T, ctx context.Context, group, topic string, n int, extra ...string) (*testutil.Broker, [16]byte) {
	t.Helper()
	b := startShareBroker(t, extra...)
	cl, adm := newShareTopic(t, ctx, b, topic)
	setGroupConfig(t, ctx, cl, group, "share.auto.offset.reset", "earliest")
	produceValues(t, ctx, cl, topic, 0, n)
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return b, [16]byte(tds[topic].ID)
}

func joinedMember(t *testing.T, addr, group, id, topic string) *testutil.ShareMember {
	t.Helper()
	m, err := testutil.NewShareMember(addr, group, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Conn.Close() })
	if _, err := m.Join(topic); err != nil {
		t.Fatal(err)
	}
	return m
}

func wantShareCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	code := int16(0)
	if want != nil {
		code = want.Code
	}
	if got != code {
		t.Errorf("%s: error code %d (%v), want %d (%v)", what, got, kerr.ErrorForCode(got), code, want)
	}
}

// TestShareSessionRules: the share session epochs of ShareFetch and ShareAcknowledge (Kafka's
// SharePartitionManager.newContext and acknowledgeSessionUpdate): epoch 0 opens a session and
// takes no acknowledgements, an unknown session is SHARE_SESSION_NOT_FOUND, a wrong epoch
// INVALID_SHARE_SESSION_EPOCH, ShareAcknowledge cannot open one, a closing fetch must not fetch,
// and the broker holds at most group.share.max.share.sessions sessions.
func TestShareSessionRules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "sess", "sess-t", 10, "group.share.max.share.sessions=2")
	m := joinedMember(t, b.Addr(), "sess", "member-a", "sess-t")

	// Not a well-formed member id.
	bad := m.FetchRequest(id, []int32{0}, 10, 0)
	empty := ""
	bad.MemberID = &empty
	r, err := m.Fetch(bad)
	if err != nil {
		t.Fatal(err)
	}
	wantShareCode(t, "empty member id", r.ErrorCode, kerr.InvalidRequest)

	// No session yet.
	m.Sess = 3
	r, _ = m.Fetch(m.FetchRequest(id, []int32{0}, 10, 0))
	wantShareCode(t, "epoch 3 without a session", r.ErrorCode, kerr.ShareSessionNotFound)
	a, _ := m.Acknowledge(-1, false)
	wantShareCode(t, "closing ShareAcknowledge without a session", a.ErrorCode, kerr.ShareSessionNotFound)
	a, _ = m.Acknowledge(0, false)
	wantShareCode(t, "ShareAcknowledge at epoch 0", a.ErrorCode, kerr.InvalidShareSessionEpoch)

	// Epoch 0 with acknowledgements.
	m.Sess = 0
	r, _ = m.Fetch(m.FetchRequest(id, []int32{0}, 5, 0, testutil.ShareAck{Topic: id, First: 0, Last: 0, Types: []int8{1}}))
	wantShareCode(t, "acknowledgements when opening", r.ErrorCode, kerr.InvalidRequest)

	// Open, then the epochs must follow.
	r, _ = m.Fetch(m.FetchRequest(id, []int32{0}, 5, 0))
	wantShareCode(t, "open", r.ErrorCode, nil)
	if got := testutil.Acquired(r); len(got) != 5 || r.AcquisitionLockTimeoutMillis != 3000 {
		t.Fatalf("open: acquired %v, lock timeout %d", got, r.AcquisitionLockTimeoutMillis)
	}
	stale := m.Sess + 1
	m.Sess = stale
	r, _ = m.Fetch(m.FetchRequest(id, []int32{0}, 5, 0))
	wantShareCode(t, "wrong epoch", r.ErrorCode, kerr.InvalidShareSessionEpoch)
	m.Sess = 1
	a, _ = m.Acknowledge(1, false, testutil.ShareAck{Topic: id, First: 0, Last: 4, Types: []int8{1}})
	wantShareCode(t, "acknowledge at epoch 1", a.ErrorCode, nil)
	wantShareCode(t, "acknowledge at epoch 1 (partition)", a.Topics[0].Partitions[0].ErrorCode, nil)
	a, _ = m.Acknowledge(1, false)
	wantShareCode(t, "epoch 1 again", a.ErrorCode, kerr.InvalidShareSessionEpoch)

	// A closing ShareFetch must not fetch.
	closing := m.FetchRequest(id, []int32{0}, 5, 0)
	closing.ShareSessionEpoch = -1
	r, _ = m.Fetch(closing)
	wantShareCode(t, "closing fetch with fetch data", r.ErrorCode, kerr.InvalidRequest)

	// The session limit.
	m2 := joinedMember(t, b.Addr(), "sess", "member-b", "sess-t")
	r, _ = m2.Fetch(m2.FetchRequest(id, []int32{0}, 1, 0))
	wantShareCode(t, "second session", r.ErrorCode, nil)
	m3 := joinedMember(t, b.Addr(), "sess", "member-c", "sess-t")
	r, _ = m3.Fetch(m3.FetchRequest(id, []int32{0}, 1, 0))
	wantShareCode(t, "third session", r.ErrorCode, kerr.ShareSessionLimitReached)
	// Closing one makes room.
	a, _ = m2.Acknowledge(-1, false)
	wantShareCode(t, "close", a.ErrorCode, nil)
	r, _ = m3.Fetch(m3.FetchRequest(id, []int32{0}, 1, 0))
	wantShareCode(t, "third session after a close", r.ErrorCode, nil)
}

// TestShareSessionCloseReleases: records a member holds go back when its session closes
// normally (their delivery taken back: the next consumer sees delivery count 1) and when its
// connection drops (the delivery counts).
func TestShareSessionCloseReleases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "close", "close-t", 10)
	a := joinedMember(t, b.Addr(), "close", "member-a", "close-t")
	c := joinedMember(t, b.Addr(), "close", "member-c", "close-t")

	r, _ := a.Fetch(a.FetchRequest(id, []int32{0}, 10, 0))
	if len(testutil.Acquired(r)) != 10 {
		t.Fatalf("a acquired %v", testutil.Acquired(r))
	}
	r, _ = c.Fetch(c.FetchRequest(id, []int32{0}, 10, 0))
	if got := testutil.Acquired(r); len(got) != 0 {
		t.Fatalf("c acquired %v while a holds everything", got)
	}
	if ack, _ := a.Acknowledge(-1, false); ack.ErrorCode != 0 {
		t.Fatalf("close: %d", ack.ErrorCode)
	}
	r, _ = c.Fetch(c.FetchRequest(id, []int32{0}, 10, 1000))
	got := testutil.Acquired(r)
	if len(got) != 10 || got[0] != 1 {
		t.Fatalf("after a's session closed, c acquired %v; want 10 records with delivery count 1", got)
	}

	// c's connection drops: the records go to a fresh session of a, counted.
	c.Conn.Close()
	a.Sess = 0
	var again map[int64]int16
	waitFor(t, "records released by the dropped connection", 10*time.Second, func() bool {
		r, _ = a.Fetch(a.FetchRequest(id, []int32{0}, 10, 200))
		again = testutil.Acquired(r)
		return len(again) > 0
	})
	if len(again) != 10 || again[0] != 2 {
		t.Fatalf("after c's connection closed, a acquired %v; want 10 records with delivery count 2", again)
	}
}

// TestShareAcknowledgeErrors: acknowledgement errors per partition: INVALID_RECORD_STATE for
// records another member holds, INVALID_REQUEST for malformed batches (unsorted, bad types,
// RENEW outside a renew request), UNKNOWN_TOPIC_ID; a renew request must not fetch; a consumer
// group id is GROUP_ID_NOT_FOUND.
func TestShareAcknowledgeErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "ackerr", "ackerr-t", 10)
	a := joinedMember(t, b.Addr(), "ackerr", "member-a", "ackerr-t")
	c := joinedMember(t, b.Addr(), "ackerr", "member-c", "ackerr-t")
	a.Fetch(a.FetchRequest(id, []int32{0}, 5, 0))
	c.Fetch(c.FetchRequest(id, []int32{0}, 5, 0))

	part := func(r *kmsg.ShareAcknowledgeResponse) int16 {
		if len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			t.Fatalf("no partition in %+v", r)
		}
		return r.Topics[0].Partitions[0].ErrorCode
	}
	r, _ := c.Acknowledge(c.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 1, Types: []int8{coordinator.AckAccept}})
	wantShareCode(t, "acknowledging a's records", part(r), kerr.InvalidRecordState)
	r, _ = a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, First: 3, Last: 4, Types: []int8{1}}, testutil.ShareAck{Topic: id, First: 0, Last: 1, Types: []int8{1}})
	wantShareCode(t, "unsorted batches", part(r), kerr.InvalidRequest)
	r, _ = a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 1, Types: []int8{9}})
	wantShareCode(t, "unknown type", part(r), kerr.InvalidRequest)
	r, _ = a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 1, Types: []int8{1, 1, 1}})
	wantShareCode(t, "types of another length", part(r), kerr.InvalidRequest)
	r, _ = a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 1, Types: []int8{coordinator.AckRenew}})
	wantShareCode(t, "RENEW outside a renew request", part(r), kerr.InvalidRequest)
	r, _ = a.Acknowledge(a.Sess, true, testutil.ShareAck{Topic: id, First: 0, Last: 1, Types: []int8{coordinator.AckRenew}})
	wantShareCode(t, "RENEW", part(r), nil)
	r, _ = a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: [16]byte{1}, First: 0, Last: 1, Types: []int8{1}})
	wantShareCode(t, "unknown topic id", part(r), kerr.UnknownTopicID)

	renew := a.FetchRequest(id, []int32{0}, 5, 0, testutil.ShareAck{Topic: id, First: 2, Last: 2, Types: []int8{coordinator.AckRenew}})
	renew.IsRenewAck = true
	f, _ := a.Fetch(renew)
	wantShareCode(t, "renew fetch with MaxRecords", f.ErrorCode, kerr.InvalidRequest)
	renew.MaxRecords, renew.BatchSize, renew.MaxBytes, renew.MinBytes = 0, 0, 0, 0
	f, _ = a.Fetch(renew)
	wantShareCode(t, "renew fetch", f.ErrorCode, nil)
	if len(f.Topics) != 1 || f.Topics[0].Partitions[0].AcknowledgeErrorCode != 0 || len(f.Topics[0].Partitions[0].AcquiredRecords) != 0 {
		t.Errorf("renew fetch answered %+v", f.Topics)
	}

	// An unknown topic in a fetch.
	d, _ := testutil.NewShareMember(b.Addr(), "ackerr", "member-d")
	defer d.Conn.Close()
	f, _ = d.Fetch(d.FetchRequest([16]byte{7}, []int32{0}, 5, 0))
	if len(f.Topics) != 1 || f.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("unknown topic fetch answered %+v", f.Topics)
	}

	// A consumer group's id is no share group.
	cl := newClient(t, b.Addr())
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames, hb.Topics = "a-consumer-group", "cgm", 30000, []string{"ackerr-t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp, err := hb.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("consumer group join: %v %+v", err, resp)
	}
	e, _ := testutil.NewShareMember(b.Addr(), "a-consumer-group", "member-e")
	defer e.Conn.Close()
	f, _ = e.Fetch(e.FetchRequest(id, []int32{0}, 5, 0))
	wantShareCode(t, "fetch for a consumer group", f.ErrorCode, kerr.GroupIDNotFound)
	if _, err := e.Join("ackerr-t"); err == nil || err != kerr.GroupIDNotFound {
		t.Errorf("share join of a consumer group: %v", err)
	}
}

// TestShareGroupAdminIntegration: share groups in ListGroups (type share), ShareGroupDescribe,
// DescribeGroups (not a classic group), DeleteGroups (NON_EMPTY_GROUP while members remain),
// and the share offset admin APIs.
func TestShareGroupAdminIntegration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "adm", "adm-t", 10)
	adm := kadm.NewClient(newClient(t, b.Addr()))
	m := joinedMember(t, b.Addr(), "adm", "member-a", "adm-t")
	r, _ := m.Fetch(m.FetchRequest(id, []int32{0}, 4, 0))
	m.Acknowledge(m.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 3, Types: []int8{1}})
	_ = r

	listed, err := adm.ListGroupsByType(ctx, []string{"share"})
	if err != nil || len(listed) != 1 || listed["adm"].GroupType != "share" || listed["adm"].State != "Stable" {
		t.Fatalf("ListGroups type share: %v %+v", err, listed)
	}
	ds, err := adm.DescribeShareGroups(ctx, "adm")
	if err != nil || ds["adm"].GroupState != "Stable" || len(ds["adm"].Members) != 1 || ds["adm"].Assignor != "simple" {
		t.Fatalf("DescribeShareGroups: %v %+v", err, ds)
	}
	if got := ds["adm"].Members[0].Assignment["adm-t"]; len(got) != 1 {
		t.Errorf("member assignment %v", ds["adm"].Members[0].Assignment)
	}
	dg, err := adm.DescribeGroups(ctx, "adm")
	if err != nil || dg["adm"].Err == nil {
		t.Errorf("DescribeGroups of a share group: %v %+v", err, dg["adm"])
	}
	offs, err := adm.DescribeShareGroupOffsets(ctx, "adm")
	if err != nil || offs["adm"].Offsets["adm-t"][0].StartOffset != 4 || offs["adm"].Offsets["adm-t"][0].Lag != 6 {
		t.Fatalf("DescribeShareGroupOffsets: %v %+v", err, offs)
	}
	del, err := adm.DeleteGroups(ctx, "adm")
	if err != nil || del["adm"].Err != kerr.NonEmptyGroup {
		t.Errorf("DeleteGroups of a live share group: %v %+v", err, del)
	}
	_, err = adm.AlterShareGroupOffsets(ctx, "adm", kadm.Offsets{"adm-t": {0: {At: 8}}})
	if err != kerr.NonEmptyGroup {
		t.Errorf("AlterShareGroupOffsets of a live group: %v", err)
	}
	if err := m.Leave(); err != nil {
		t.Fatal(err)
	}
	alter, err := adm.AlterShareGroupOffsets(ctx, "adm", kadm.Offsets{"adm-t": {0: {At: 8}}})
	if err != nil || alter["adm-t"][0] != nil {
		t.Fatalf("AlterShareGroupOffsets: %v %+v", err, alter)
	}
	offs, _ = adm.DescribeShareGroupOffsets(ctx, "adm")
	if o := offs["adm"].Offsets["adm-t"][0]; o.StartOffset != 8 || o.Lag != 2 {
		t.Errorf("after the alter: %+v", o)
	}
	if _, err := adm.DeleteShareGroupOffsets(ctx, "adm", "adm-t"); err != nil {
		t.Fatal(err)
	}
	offs, _ = adm.DescribeShareGroupOffsets(ctx, "adm")
	if len(offs["adm"].Offsets["adm-t"]) != 0 {
		t.Errorf("after the delete: %+v", offs["adm"].Offsets)
	}
	del, err = adm.DeleteGroups(ctx, "adm")
	if err != nil || del["adm"].Err != nil {
		t.Errorf("DeleteGroups of the empty share group: %v %+v", err, del)
	}
	listed, _ = adm.ListGroupsByType(ctx, []string{"share"})
	if len(listed) != 0 {
		t.Errorf("share groups after the delete: %+v", listed)
	}
}

// scrapeMetrics returns the broker's /metrics page.
func scrapeMetrics(t *testing.T, b *testutil.Broker) string {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// TestShareMetrics: acquisitions, redeliveries, acknowledgements by type, archived records, lock
// timeouts, share sessions and share group counts are exported.
func TestShareMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "met", "met-t", 10)
	cl := newClient(t, b.Addr())
	setGroupConfig(t, ctx, cl, "met", "share.delivery.count.limit", "2", "share.record.lock.duration.ms", "1000")
	m := joinedMember(t, b.Addr(), "met", "member-a", "met-t")
	m.Fetch(m.FetchRequest(id, []int32{0}, 10, 0))
	m.Acknowledge(m.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 5, Types: []int8{1, 1, 2, 3, 0, 2}})
	// 2 and 5 come back; 6–9 time out.
	time.Sleep(1500 * time.Millisecond)
	r, _ := m.Fetch(m.FetchRequest(id, []int32{0}, 10, 0))
	if got := testutil.Acquired(r); len(got) == 0 {
		t.Fatalf("nothing acquired again")
	}
	m.Acknowledge(m.Sess, false, testutil.ShareAck{Topic: id, First: 2, Last: 2, Types: []int8{2}})
	out := scrapeMetrics(t, b)
	for _, want := range []string{
		`muster_share_record_acknowledgements_total{ack_type="accept"} 2`,
		`muster_share_record_acknowledgements_total{ack_type="release"} 3`,
		`muster_share_record_acknowledgements_total{ack_type="reject"} 1`,
		`muster_share_record_acknowledgements_total{ack_type="gap"} 1`,
		`muster_share_acquisition_lock_timeouts_total 4`,
		`muster_share_records_archived_total 1`,
		`muster_share_sessions 1`,
		`muster_group_coordinator_group_count{protocol="share"} 1`,
		`muster_group_coordinator_share_group_count{state="Stable"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, want := range []string{"muster_share_records_acquired_total ", "muster_share_records_redelivered_total ", "muster_group_coordinator_share_group_rebalances_total "} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestShareCoordinatorKeys: FindCoordinator key type 2 (v6+) names the broker for a well-formed
// share-partition key "group:topicId:partition" and refuses a malformed one.
func TestShareCoordinatorKeys(t *testing.T) {
	b := startShareBroker(t)
	c, err := testutil.DialRaw(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType = 6, 2
	req.CoordinatorKeys = []string{"grp:AAAAAAAAAAAAAAAAAAAAAQ:3", "grp:not-an-id:3", "grp:AAAAAAAAAAAAAAAAAAAAAQ:-1", "grp"}
	r, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cs := r.(*kmsg.FindCoordinatorResponse).Coordinators
	if len(cs) != 4 || cs[0].ErrorCode != 0 || cs[0].NodeID < 0 {
		t.Fatalf("well-formed key: %+v", cs)
	}
	for _, k := range cs[1:] {
		if k.ErrorCode != kerr.InvalidRequest.Code || k.NodeID != -1 {
			t.Errorf("key %q: code %d node %d, want INVALID_REQUEST and no node", k.Key, k.ErrorCode, k.NodeID)
		}
	}
}

// TestShareFetchLongPoll: a ShareFetch that finds nothing waits up to MaxWaitMillis and answers
// as soon as records arrive, or as soon as records held by another member become available again.
func TestShareFetchLongPoll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, id := shareSetup(t, ctx, "poll", "poll-t", 0)
	a := joinedMember(t, b.Addr(), "poll", "member-a", "poll-t")
	c := joinedMember(t, b.Addr(), "poll", "member-c", "poll-t")

	// Nothing there: the fetch waits its whole MaxWait.
	start := time.Now()
	r, _ := a.Fetch(a.FetchRequest(id, []int32{0}, 10, 300))
	if got := testutil.Acquired(r); len(got) != 0 || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("empty long-poll: %v after %v", got, time.Since(start))
	}
	// A produce ends the wait.
	cl := newClient(t, b.Addr())
	go func() {
		time.Sleep(300 * time.Millisecond)
		produceValues(t, ctx, cl, "poll-t", 0, 3)
	}()
	start = time.Now()
	r, _ = a.Fetch(a.FetchRequest(id, []int32{0}, 10, 10000))
	held := testutil.Acquired(r)
	if len(held) == 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("long-poll for new records: %v after %v", held, time.Since(start))
	}
	for len(held) < 3 { // the records arrive one by one
		r, _ = a.Fetch(a.FetchRequest(id, []int32{0}, 10, 1000))
		for o, n := range testutil.Acquired(r) {
			held[o] = n
		}
	}
	// c waits while a holds everything; a's release ends c's wait.
	done := make(chan map[int64]int16)
	go func() {
		r, _ := c.Fetch(c.FetchRequest(id, []int32{0}, 10, 10000))
		done <- testutil.Acquired(r)
	}()
	time.Sleep(300 * time.Millisecond)
	if ack, _ := a.Acknowledge(a.Sess, false, testutil.ShareAck{Topic: id, First: 0, Last: 2, Types: []int8{2}}); ack.ErrorCode != 0 {
		t.Fatalf("release: %+v", ack)
	}
	select {
	case got := <-done:
		if len(got) != 3 || got[0] != 2 {
			t.Fatalf("c acquired %v after a's release, want 3 records at delivery count 2", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("c's long-poll did not end when a released its records")
	}
}
