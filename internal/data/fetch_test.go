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
