package reliability

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/testutil"
)

// mountSmallFS mounts a size-limited tmpfs of mib MiB at a fresh directory and unmounts it when
// the test ends. It skips the test, saying why, only when mounting is impossible (not root, or
// no mount permission in a container).
func mountSmallFS(t *testing.T, mib int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", mib), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a %d MiB tmpfs for the full-disk test (needs root and mount permission; CI runs as root): %v: %s",
			mib, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// freeBytes is the space available on the file system holding dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// recordBatch encodes one magic-2 batch holding value, as a client does.
func recordBatch(value []byte) []byte {
	r := kmsg.NewRecord()
	r.Value = value
	body := r.AppendTo(nil)
	r.Length = int32(len(body) - len(binary.AppendVarint(nil, int64(r.Length))))
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: r.AppendTo(nil)}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// rawProduce sends one Produce v9 (acks=all) of value straight to the broker (no client retry)
// and returns the partition's error code and message.
func rawProduce(t *testing.T, cl *kgo.Client, topic string, value []byte) (int16, string) {
	t.Helper()
	code, msg, err := tryProduce(cl, topic, value)
	if err != nil {
		t.Fatal(err)
	}
	return code, msg
}

// tryProduce is rawProduce returning a request error.
func tryProduce(cl *kgo.Client, topic string, value []byte) (int16, string, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = recordBatch(value)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		return 0, "", err
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	msg := ""
	if p.ErrorMessage != nil {
		msg = *p.ErrorMessage
	}
	return p.ErrorCode, msg, nil
}

// rawCommit sends one OffsetCommit for a simple group straight to the broker.
func rawCommit(t *testing.T, cl *kgo.Client, group, topic string, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 8, group, -1
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// kgo sends the newest version both sides speak: from v10 the topic is named by its id.
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("topic id of %s: %v %v", topic, err, td[topic].Err)
	}
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, td[topic].ID
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset, rp.LeaderEpoch = offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// httpGet returns the status and body of an HTTP GET.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric returns the value of the exposition line that starts with series ("" if none).
func metric(body, series string) string {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return rest
		}
	}
	return ""
}

// groupErrors counts the errors that end a client's group session.
type groupErrors struct{ n atomic.Int64 }

func (g *groupErrors) OnGroupManageError(err error) {
	if !errors.Is(err, context.Canceled) {
		g.n.Add(1)
	}
}

// waitFor polls cond every 20 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

const (
	fullTopic    = "fill"
	fullGroup    = "readers"
	fullSimple   = "simple"
	fullRecordKB = 100
)

// TestFullDisk runs `muster serve` on a 40 MiB file system with a 12 MiB free-space threshold
// and fills it with incompressible 100 kB records from a franz-go producer:
//
//   - the process stays up; Produce answers KAFKA_STORAGE_ERROR with the reason, OffsetCommit
//     COORDINATOR_NOT_AVAILABLE, CreateTopics KAFKA_STORAGE_ERROR; /readyz says degraded and
//     the metrics show it;
//   - a classic group member keeps consuming every stored record and its heartbeats keep
//     working (its group session survives several session timeouts);
//   - DeleteRecords frees the space and writes resume without a restart;
//   - after a restart every acknowledged record (above the log start) and commit is there;
//   - a restart on a disk filled to the last byte starts (degraded) without flooding its log.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the muster binary")
	}
	mnt := mountSmallFS(t, 40)
	tmp := t.TempDir()
	bin := testutil.BuildMuster(t)
	dir := filepath.Join(mnt, "data")
	addr, httpAddr := freePort(t), freePort(t)
	guard := []string{"--override", "muster.storage.min.free.bytes=12582912", "--override", "muster.storage.min.free.ratio=0"}
	logPath := func(name string) *os.File {
		f, err := os.Create(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	log1 := logPath("serve1.log")
	p := startServe(t, bin, dir, addr, httpAddr, log1, guard...)
	defer func() { p.cmd.Process.Kill(); <-p.done }()

	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, fullTopic); err != nil {
		t.Fatal(err)
	}

	// Acknowledged writes.
	var mu sync.Mutex
	acked := map[int64][]byte{} // offset → value
	commits := map[string]int64{}

	// A classic group member consuming everything, heartbeating every 300 ms, with a session
	// timeout of 6 s.
	gerrs := &groupErrors{}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(fullGroup), kgo.ConsumeTopics(fullTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.HeartbeatInterval(300*time.Millisecond),
		kgo.SessionTimeout(6*time.Second), kgo.WithHooks(gerrs), kgo.FetchMaxBytes(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var consumed atomic.Int64 // one past the highest offset consumed
	var lastConsumedValue atomic.Pointer[[]byte]
	cctx, stopConsumer := context.WithCancel(ctx)
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for cctx.Err() == nil {
			fs := consumer.PollFetches(cctx)
			fs.EachRecord(func(r *kgo.Record) {
				consumed.Store(r.Offset + 1)
				v := r.Value
				lastConsumedValue.Store(&v)
			})
		}
	}()

	// Fill the disk: a franz-go producer of incompressible 100 kB records until a record fails.
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(fullTopic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	produce := func() error {
		v := make([]byte, fullRecordKB*1000)
		rand.Read(v)
		r := &kgo.Record{Value: v}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			return err
		}
		mu.Lock()
		acked[r.Offset] = v
		mu.Unlock()
		return nil
	}
	before := freeBytes(t, mnt)
	t0 := time.Now()
	// Until a record fails with the disk short of space: franz-go retries KAFKA_STORAGE_ERROR
	// (retriable) until the delivery timeout, so the error is a timeout; a record that timed out
	// while space was left (a slow machine: -race, a loaded CI runner) is just tried again.
	var perr error
	for i := 0; i < 1000; i++ {
		if perr = produce(); perr == nil {
			continue
		}
		if freeBytes(t, mnt) < 13<<20 {
			break
		}
		if time.Since(t0) > 2*time.Minute {
			logBytes, _ := os.ReadFile(log1.Name())
			t.Fatalf("the disk did not fill within 2 minutes (%d bytes free); last error: %v\nbroker log:\n%s", freeBytes(t, mnt), perr, tail(string(logBytes), 40))
		}
	}
	if perr == nil {
		t.Fatal("1000 records (100 MB) fitted on a 40 MiB file system")
	}
	phase := func(name string) { t.Logf("%s: %v", name, time.Since(t0).Round(time.Millisecond)) }
	phase("filled")

	t.Logf("filled: %d records acknowledged, free space %d → %d bytes; the producer's last error: %v",
		len(acked), before, freeBytes(t, mnt), perr)
	if free := freeBytes(t, mnt); free < 4<<20 {
		t.Fatalf("only %d bytes left: the guard let the disk fill far past its 12 MiB threshold", free)
	}

	// Degraded: the process is up and says why; writes that grow the store are refused with
	// retriable codes.
	select {
	case <-p.done:
		t.Fatalf("muster serve exited on a full disk: %v", p.cmd.ProcessState)
	default:
	}
	code, body := httpGet(t, "http://"+httpAddr+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "low_disk_space") {
		t.Fatalf("/readyz while short of space: %d %q", code, body)
	}
	_, metrics := httpGet(t, "http://"+httpAddr+"/metrics")
	if metric(metrics, `muster_storage_degraded{reason="low_disk_space"}`) != "1" ||
		metric(metrics, `muster_storage_refused_writes_total{reason="low_disk_space",write="produce"}`) == "0" {
		t.Fatalf("storage metrics while short of space:\n%s", grepLines(metrics, "muster_storage"))
	}
	value := make([]byte, fullRecordKB*1000)
	rand.Read(value)
	if c, msg := rawProduce(t, admCl, fullTopic, value); c != kerr.KafkaStorageError.Code || !strings.Contains(msg, "free disk space") {
		t.Fatalf("produce while short of space: %v %q, want KAFKA_STORAGE_ERROR with the reason", kerr.ErrorForCode(c), msg)
	}
	if c := rawCommit(t, admCl, fullSimple, fullTopic, 1); c != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit while short of space: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(c))
	}
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "new"); err == nil || !errors.Is(r.Err, kerr.KafkaStorageError) {
		t.Fatalf("create topic while short of space: %v %v", r.Err, err)
	}

	phase("degraded checked")
	// The group member consumes everything stored, and its session survives well past its
	// session timeout: heartbeats work.
	mu.Lock()
	end := int64(len(acked))
	mu.Unlock()
	waitFor(t, 30*time.Second, "the consumer to read every stored record", func() bool { return consumed.Load() >= end })
	groupErrsBefore := gerrs.n.Load()
	described, err := adm.DescribeGroups(ctx, fullGroup)
	if err != nil || described[fullGroup].State != "Stable" || len(described[fullGroup].Members) != 1 {
		t.Fatalf("group before the wait: %+v %v", described[fullGroup], err)
	}
	member := described[fullGroup].Members[0].MemberID
	time.Sleep(8 * time.Second) // > the 6 s session timeout
	described, err = adm.DescribeGroups(ctx, fullGroup)
	if err != nil || described[fullGroup].State != "Stable" || len(described[fullGroup].Members) != 1 ||
		described[fullGroup].Members[0].MemberID != member || gerrs.n.Load() != groupErrsBefore {
		t.Fatalf("group after 8 s short of space: %+v %v (%d session errors); heartbeats must keep the member", described[fullGroup], err, gerrs.n.Load()-groupErrsBefore)
	}
	fetched, err := adm.FetchOffsets(ctx, fullGroup)
	if err != nil {
		t.Fatalf("offset fetch while short of space: %v", err)
	}
	_ = fetched

	phase("group checked")
	// Free space with Kafka's own tool (DeleteRecords): writes resume without a restart.
	keepFrom := end - 5
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: fullTopic, Partition: 0, At: keepFrom})
	if r, err := adm.DeleteRecords(ctx, del); err != nil || r.Error() != nil {
		t.Fatalf("delete records while short of space: %v %v", err, r.Error())
	}
	waitFor(t, 20*time.Second, "writes to resume after DeleteRecords", func() bool {
		_, m := httpGet(t, "http://"+httpAddr+"/metrics")
		return metric(m, `muster_storage_degraded{reason="low_disk_space"}`) == "0"
	})
	if c, msg := rawProduce(t, admCl, fullTopic, value); c != 0 {
		t.Fatalf("produce after freeing space: %v %q", kerr.ErrorForCode(c), msg)
	}
	for i := 0; i < 5; i++ {
		if err := produce(); err != nil {
			t.Fatalf("producer after freeing space: %v", err)
		}
	}
	if c := rawCommit(t, admCl, fullSimple, fullTopic, 7); c != 0 {
		t.Fatalf("commit after freeing space: %v", kerr.ErrorForCode(c))
	}
	commits[fullSimple] = 7
	mu.Lock()
	end = 0
	for off := range acked {
		end = max(end, off+1)
	}
	mu.Unlock()
	waitFor(t, 30*time.Second, "the consumer to read the new records", func() bool { return consumed.Load() >= end })
	stopConsumer()
	<-consumerDone
	cctx2, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := consumer.CommitUncommittedOffsets(cctx2); err != nil {
		t.Fatalf("group commit after freeing space: %v", err)
	}
	cancel()
	commits[fullGroup] = consumed.Load()

	phase("resumed")
	// Restart: every acknowledged record at or above the log start, and every commit, is there.
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	p = startServe(t, bin, dir, addr, httpAddr, logPath("serve2.log"), guard...)
	verifyFullDisk(t, addr, acked, keepFrom, commits)

	phase("restarted and verified")
	// Restart on a disk filled to the last byte: fill to the threshold again, stop, take the
	// rest with a file, start: the process comes up degraded (or not ready, saying why) and
	// its log stays short.
	for perr = nil; perr == nil; {
		perr = produce()
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	if err := fillUp(filepath.Join(mnt, "ballast")); err != nil {
		t.Fatal(err)
	}
	if free := freeBytes(t, mnt); free != 0 {
		t.Fatalf("ballast left %d bytes", free)
	}
	phase("filled again")
	logf := logPath("serve3.log")
	p = startNoWait(t, bin, dir, addr, httpAddr, logf, guard...)
	var readyz string
	waitFor(t, 30*time.Second, "/readyz on a full disk", func() bool {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		readyz = fmt.Sprintf("%d %s", resp.StatusCode, b)
		return (resp.StatusCode == http.StatusOK && strings.Contains(readyz, "degraded")) ||
			(resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(readyz, "storage"))
	})
	time.Sleep(5 * time.Second)
	select {
	case <-p.done:
		t.Fatalf("muster serve exited on a full disk: %v", p.cmd.ProcessState)
	default:
	}
	logBytes, _ := os.ReadFile(logf.Name())
	lines := bytes.Count(logBytes, []byte("\n"))
	t.Logf("restart on a full disk: /readyz %q; %d log lines in the first 5+ s", strings.TrimSpace(readyz), lines)
	if lines > 30 {
		t.Fatalf("%d log lines after a restart on a full disk (flood):\n%s", lines, logBytes)
	}
	// Removing the file and deleting records frees the disk; writes resume without a restart.
	os.Remove(filepath.Join(mnt, "ballast"))
	mu.Lock()
	for off := range acked {
		end = max(end, off+1)
	}
	mu.Unlock()
	keepFrom = end - 5
	del = kadm.Offsets{}
	del.Add(kadm.Offset{Topic: fullTopic, Partition: 0, At: keepFrom})
	if r, err := adm.DeleteRecords(ctx, del); err != nil || r.Error() != nil {
		t.Fatalf("delete records after a restart on a full disk: %v %v", err, r.Error())
	}
	var last string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, msg, err := tryProduce(admCl, fullTopic, value)
		if err == nil && c == 0 {
			break
		}
		last = fmt.Sprintf("%v %v %q", err, kerr.ErrorForCode(c), msg)
		if time.Now().After(deadline) {
			_, rz := httpGet(t, "http://"+httpAddr+"/readyz")
			logBytes, _ := os.ReadFile(logf.Name())
			t.Fatalf("writes did not resume after the disk was freed (free %d bytes): last produce %s; /readyz %q; log:\n%s",
				freeBytes(t, mnt), last, rz, logBytes)
		}
	}
	verifyFullDisk(t, addr, acked, keepFrom, commits)
}

// fillUp writes zeros to path until the file system is full.
func fillUp(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// verifyFullDisk checks every acknowledged record at or above keepFrom and every commit.
func verifyFullDisk(t *testing.T, addr string, acked map[int64][]byte, keepFrom int64, commits map[string]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		fullTopic: {0: kgo.NewOffset().At(keepFrom)}}), kgo.FetchMaxBytes(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := 0
	var last int64
	for off := range acked {
		if off >= keepFrom {
			want++
			last = max(last, off)
		}
	}
	got := map[int64][]byte{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for got[last] == nil && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[r.Offset] = r.Value })
	}
	for off, v := range acked {
		if off >= keepFrom && !bytes.Equal(got[off], v) {
			t.Fatalf("acknowledged record at offset %d lost or changed after restart (%d of %d found)", off, len(got), want)
		}
	}
	adm := kadm.NewClient(cl)
	for g, off := range commits {
		resp, err := adm.FetchOffsets(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := resp.Lookup(fullTopic, 0); !ok || o.At != off {
			t.Fatalf("group %s: committed %+v after restart, acknowledged %d", g, o, off)
		}
	}
	t.Logf("verified %d acknowledged records and %d commits", want, len(commits))
}

// grepLines keeps the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
