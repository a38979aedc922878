package data

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestLongPollFetchWokenByProduce(t *testing.T) {
	e := newEnv(t)
	e.createTopic("poll", 1, nil)
	req := fetchReq(11, "poll", 0, 0)
	req.MinBytes, req.MaxWaitMillis = 1, 60_000
	done := make(chan *kmsg.FetchResponse, 1)
	go func() { done <- e.p.Fetch(context.Background(), req) }()
	select {
	case <-done:
		t.Fatal("fetch returned before any data")
	case <-time.After(20 * time.Millisecond):
	}
	e.produce("poll", 0, makeBatch(batchOpts{n: 2}))
	resp := <-done // would block for 60s if the produce did not wake it
	if bs := decodeBatches(t, resp.Topics[0].Partitions[0].RecordBatches); len(bs) != 1 {
		t.Fatalf("got %d batches", len(bs))
	}
}

func TestLongPollFetchEndsOnCancelAndTimeout(t *testing.T) {
	e := newEnv(t)
	e.createTopic("idle", 1, nil)
	req := fetchReq(11, "idle", 0, 0)
	req.MinBytes, req.MaxWaitMillis = 1, 60_000
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *kmsg.FetchResponse, 1)
	go func() { done <- e.p.Fetch(ctx, req) }()
	cancel()
	if resp := <-done; resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("cancelled fetch: %+v", resp)
	}
	req.MaxWaitMillis = 5
	if resp := e.p.Fetch(context.Background(), req); len(resp.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatal("unexpected data")
	}
	if len(e.p.byName["idle"].parts[0].waiters) != 0 {
		t.Fatal("waiters leaked")
	}
}

func TestLongPollFetchWokenByTopicDeletion(t *testing.T) {
	e := newEnv(t)
	e.createTopic("gone", 1, nil)
	req := fetchReq(11, "gone", 0, 0)
	req.MinBytes, req.MaxWaitMillis = 1, 60_000
	done := make(chan *kmsg.FetchResponse, 1)
	go func() { done <- e.p.Fetch(context.Background(), req) }()
	time.Sleep(10 * time.Millisecond)
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{"gone"}
	e.p.DeleteTopics(e.ctx, del)
	if resp := <-done; resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("fetch of deleted topic: %+v", resp.Topics[0].Partitions[0])
	}
}

func TestFetchSessionDeclined(t *testing.T) {
	e := newEnv(t)
	e.createTopic("s", 1, nil)
	req := fetchReq(12, "s", 0, 0)
	req.SessionEpoch = 0 // ask for a new session
	if resp := e.p.Fetch(e.ctx, req); resp.SessionID != 0 || resp.ErrorCode != 0 {
		t.Fatalf("session: %+v", resp)
	}
	req.SessionID, req.SessionEpoch = 7, 1
	if resp := e.p.Fetch(e.ctx, req); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// TestFetchSessionFullAndIncremental: Kafka's FetchManager.newContext serves a full fetch
// (SessionEpoch 0 or -1) whatever SessionID it names, closing that session, and answers an
// incremental one (any other epoch) for a session it does not hold FETCH_SESSION_ID_NOT_FOUND,
// also when the SessionID is 0.
func TestFetchSessionFullAndIncremental(t *testing.T) {
	e := newEnv(t)
	e.createTopic("s", 1, nil)
	e.produce("s", 0, makeBatch(batchOpts{n: 2}))
	for _, c := range []struct {
		id, epoch int32
		want      *kerr.Error
	}{
		{0, -1, nil}, {0, 0, nil}, {7, 0, nil}, {7, -1, nil},
		{0, 5, kerr.FetchSessionIDNotFound}, {7, 3, kerr.FetchSessionIDNotFound}, {0, -2, kerr.FetchSessionIDNotFound},
	} {
		req := fetchReq(12, "s", 0, 0)
		req.SessionID, req.SessionEpoch = c.id, c.epoch
		resp := e.p.Fetch(e.ctx, req)
		if got := kerr.ErrorForCode(resp.ErrorCode); got != error(c.want) && !(c.want == nil && got == nil) {
			t.Errorf("session %d epoch %d: got %v, want %v", c.id, c.epoch, got, c.want)
			continue
		}
		if c.want == nil && (resp.SessionID != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0) {
			t.Errorf("session %d epoch %d: full fetch not served: %+v", c.id, c.epoch, resp)
		}
	}
}
