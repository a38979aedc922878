package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/store/postgres"
)

func batch(base, last int64) postgres.LogBatch {
	return postgres.LogBatch{Base: base, Last: last, MaxTimestamp: base * 10, Data: bytes.Repeat([]byte{byte(base)}, 100)}
}

// TestPartitionLogs: the leader's group commit writes the batches and producer state of several
// partitions at once; reads and the end state come back; after another node takes one
// partition over, the old leader's append to it writes nothing (fenced) while its append to a
// partition it still leads lands; the log start offset moves under the leader's epoch only.
func TestPartitionLogs(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	dbA, dbB := openDB(t, url), openDB(t, url)
	a := register(t, dbA, 1, 1, 1500*time.Millisecond)
	b := register(t, dbB, 2, 2, time.Minute)
	topic := [16]byte{7}
	p0, p1 := postgres.PartitionKey{TopicID: topic, Partition: 0}, postgres.PartitionKey{TopicID: topic, Partition: 1}
	if err := dbA.CreatePartitionLeases(ctx, topic, 2); err != nil {
		t.Fatal(err)
	}
	e0, err := dbA.AcquirePartition(ctx, a, p0)
	if err != nil {
		t.Fatal(err)
	}
	e1, err := dbA.AcquirePartition(ctx, a, p1)
	if err != nil {
		t.Fatal(err)
	}
	fenced, err := dbA.AppendLogs(ctx, []postgres.LogAppend{
		{Partition: p0, Epoch: e0, Batches: []postgres.LogBatch{batch(0, 9), batch(10, 19)},
			Producers: []postgres.ProducerEntry{{ProducerID: 5, Base: 10, Epoch: 1, FirstSeq: 0, LastDelta: 9, AppendMs: 42}}},
		{Partition: p1, Epoch: e1, Batches: []postgres.LogBatch{batch(0, 4)}},
	})
	if err != nil || len(fenced) != 0 {
		t.Fatalf("append: %v, fenced %v", err, fenced)
	}
	got, err := dbA.ReadLog(ctx, p0, 5, 1<<20)
	if err != nil || len(got) != 2 || got[0].Base != 0 || got[1].Last != 19 || !bytes.Equal(got[1].Data, batch(10, 19).Data) {
		t.Fatalf("read from 5: %+v, %v", got, err)
	}
	if got, _ := dbA.ReadLog(ctx, p0, 0, 150); len(got) != 1 {
		t.Fatalf("read bounded by bytes: %d batches", len(got))
	}
	st, err := dbB.LoadLogState(ctx, p0)
	if err != nil || st.End != 20 || st.LogStart != 0 || len(st.Producers) != 1 || st.Producers[0].AppendMs != 42 {
		t.Fatalf("state %+v, %v", st, err)
	}

	time.Sleep(1600 * time.Millisecond) // a's registration expires; b takes partition 0
	eb, err := dbB.AcquirePartition(ctx, b, p0)
	if err != nil || eb <= e0 {
		t.Fatalf("takeover: epoch %d, %v", eb, err)
	}
	fenced, err = dbA.AppendLogs(ctx, []postgres.LogAppend{
		{Partition: p0, Epoch: e0, Batches: []postgres.LogBatch{batch(20, 29)}},
		{Partition: p1, Epoch: e1, Batches: []postgres.LogBatch{batch(5, 9)}},
	})
	if err != nil || len(fenced) != 1 || fenced[0] != p0 {
		t.Fatalf("stale leader's append: %v, fenced %v", err, fenced)
	}
	if st, _ := dbB.LoadLogState(ctx, p0); st.End != 20 {
		t.Fatalf("fenced batch was written: end %d", st.End)
	}
	if st, _ := dbB.LoadLogState(ctx, p1); st.End != 10 {
		t.Fatalf("partition 1 end %d, want 10", st.End)
	}
	// The new leader continues at the end offset with no offset reused.
	if fenced, err := dbB.AppendLogs(ctx, []postgres.LogAppend{{Partition: p0, Epoch: eb, Batches: []postgres.LogBatch{batch(20, 24)},
		Forget: []postgres.ProducerEntry{{ProducerID: 5, Base: 10}}}}); err != nil || len(fenced) != 0 {
		t.Fatalf("new leader's append: %v, %v", err, fenced)
	}
	if err := dbA.SetLogStart(ctx, p0, e0, 10); !errors.Is(err, postgres.ErrLogFenced) {
		t.Fatalf("stale leader's DeleteRecords: %v", err)
	}
	if err := dbB.SetLogStart(ctx, p0, eb, 10); err != nil {
		t.Fatal(err)
	}
	st, _ = dbB.LoadLogState(ctx, p0)
	if st.LogStart != 10 || st.End != 25 || len(st.Producers) != 0 {
		t.Fatalf("after DeleteRecords: %+v", st)
	}
	if got, _ := dbB.ReadLog(ctx, p0, 0, 1<<20); len(got) != 2 || got[0].Base != 10 {
		t.Fatalf("read after DeleteRecords: %+v", got)
	}
}
