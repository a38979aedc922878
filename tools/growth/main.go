// Command growth measures how muster's costs grow with input size and writes log-log plots with
// a fitted slope (docs/bench/growth/*.svg and docs/bench/growth/README.md). A slope near 1 is
// linear; a slope clearly above 1 is a bug to fix, not a number to report.
//
//	go run ./tools/growth            # from the repository root: all series, a few minutes on 2 cores
//	go run ./tools/growth -quick     # small sizes, seconds (the test suite runs this)
//
// It is its own module (tools/growth/go.mod), so muster's go.mod carries no plotting library; the
// repository's go.work puts both modules in one workspace, and its import path under
// github.com/muster-io/muster/ lets it import muster's internal packages.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/assign"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/coordtest"
	sassign "github.com/muster-io/muster/internal/streams/assignor"
)

// Series is one measured curve: y (seconds or bytes) against x (members, partitions, offsets).
type Series struct {
	Name, XLabel, YLabel string
	X, Y                 []float64
}

// Slope fits log(y) = a + b·log(x) by least squares and returns b.
func (s Series) Slope() float64 {
	var sx, sy, sxx, sxy float64
	n := float64(len(s.X))
	for i := range s.X {
		lx, ly := math.Log(s.X[i]), math.Log(s.Y[i])
		sx += lx
		sy += ly
		sxx += lx * lx
		sxy += lx * ly
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

func main() {
	quick := flag.Bool("quick", false, "small sizes only")
	out := flag.String("out", "docs/bench/growth", "output directory")
	flag.Parse()
	series := Measure(*quick)
	if err := Write(series, *out); err != nil {
		log.Fatal(err)
	}
	for _, s := range series {
		fmt.Printf("%-40s slope %.2f\n", s.Name, s.Slope())
	}
}

// Measure runs every series.
func Measure(quick bool) []Series {
	members := []int{1000, 2000, 4000, 8000, 16000}
	smembers := []int{125, 250, 500, 1000, 2000}
	jmembers, jparts := []int{250, 500, 1000, 2000, 4000}, int32(10000)
	if quick {
		members = []int{100, 200, 400}
		smembers = []int{25, 50, 100}
		jmembers, jparts = []int{25, 50, 100}, 1000
	}
	offsets := []int{25000, 50000, 100000, 200000, 400000}
	if quick {
		offsets = []int{5000, 10000, 20000}
	}
	cmembers := []int{250, 500, 1000, 2000, 4000}
	hmembers := []int{2500, 5000, 10000, 20000, 40000}
	replay := []int{125000, 250000, 500000, 1000000, 2000000}
	if quick {
		cmembers = []int{25, 50, 100}
		hmembers = []int{1000, 2000, 4000}
		replay = []int{1000, 2000, 4000}
	}
	all := []Series{uniformSeries(members), streamsSeries(smembers), offsetMemorySeries(offsets), joinStormSeries(jmembers, jparts),
		classicJoinStormSeries(cmembers), memberMemorySeries(hmembers), replaySeries(replay)}
	for i := range all {
		all[i] = all[i].positive()
	}
	return all
}

// positive drops points a log-log plot cannot show (a heap delta can come out ≤ 0 when a GC
// lands badly on a small size), saying so on stderr.
func (s Series) positive() Series {
	out := Series{Name: s.Name, XLabel: s.XLabel, YLabel: s.YLabel}
	for i := range s.X {
		if s.X[i] > 0 && s.Y[i] > 0 {
			out.X, out.Y = append(out.X, s.X[i]), append(out.Y, s.Y[i])
		} else {
			fmt.Fprintf(os.Stderr, "%s: dropped the point %v → %v (not positive)\n", s.Name, s.X[i], s.Y[i])
		}
	}
	return out
}

// classicJoinStormSeries: n classic members join one empty group (JoinGroup v9 with
// MEMBER_ID_REQUIRED, then the rejoin) and the join phase completes (manual clock stepped over
// the initial rebalance delay); CPU time until every member has its JoinGroup response.
func classicJoinStormSeries(sizes []int) Series {
	s := Series{Name: "classic group join storm (members)", XLabel: "members", YLabel: "CPU seconds"}
	join := func(memberID string) *kmsg.JoinGroupRequest {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group, req.MemberID = 9, "storm", memberID
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 45000, 300000, "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0, 3, 0, 0, 0, 1, 0, 6, 't', 'o', 'p', 'i', 'c', 's', 0, 0, 0, 0}
		req.Protocols = append(req.Protocols, p)
		return req
	}
	for _, n := range sizes {
		s.X = append(s.X, float64(n))
		s.Y = append(s.Y, median(3, func() {
			h := coordtest.New(coordinator.ConfigFrom(config.Defaults()))
			calls := make([]*coordtest.Result[*kmsg.JoinGroupResponse], n)
			for i := range calls {
				cid := "consumer-" + strconv.Itoa(i)
				first := coordtest.DoMeta(h, coordinator.Meta{APIVersion: 9, ClientID: &cid}, coordinator.JoinGroup(join("")))
				resp := first.Resp
				if resp == nil || resp.MemberID == "" {
					log.Fatalf("classic join storm: first join of member %d: %v", i, first.Err)
				}
				calls[i] = coordtest.DoMeta(h, coordinator.Meta{APIVersion: 9, ClientID: &cid}, coordinator.JoinGroup(join(resp.MemberID)))
			}
			for k := 0; k < 1000 && !calls[0].Done(); k++ {
				h.Advance(h.Cfg.Classic.InitialRebalanceDelay)
			}
			for i, c := range calls {
				if !c.Done() {
					log.Fatalf("classic join storm: member %d has no JoinGroup response", i)
				}
			}
		}))
	}
	return s
}

// memberMemorySeries: Go heap held by a coordinator shard per KIP-848 member: n members in
// groups of 10, each joined with one ConsumerGroupHeartbeat subscribing to one 1000-partition
// topic (member metadata, target and current assignment), measured after a GC.
func memberMemorySeries(sizes []int) Series {
	s := Series{Name: "shard heap vs KIP-848 members", XLabel: "members (10 per group)", YLabel: "heap bytes"}
	for _, n := range sizes {
		s.X = append(s.X, float64(n))
		s.Y = append(s.Y, heapGrowth(func() *coordtest.Harness {
			h := coordtest.New(coordinator.ConfigFrom(config.Defaults("group.consumer.assignment.interval.ms=0")))
			h.WithTopics(nil).Add("t", 1000)
			for i := 0; i < n; i++ {
				req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
				req.Version = 1
				req.Group = "group-" + strconv.Itoa(i/10)
				req.MemberID = fmt.Sprintf("member-%08d-0000-0000-000000000000", i)
				req.RebalanceTimeoutMillis = 60000
				req.SubscribedTopicNames = []string{"t"}
				req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
				if c := coordtest.DoMeta(h, coordinator.Meta{APIVersion: 1}, coordinator.ConsumerGroupHeartbeat(req)); c.Err != nil {
					log.Fatalf("member %d: %v", i, c.Err)
				}
			}
			return h
		}))
	}
	return s
}

// replaySeries: CPU time to replay n committed-offset records (1000 partitions per group, in
// key order as the store returns them) into a fresh shard State.
func replaySeries(sizes []int) Series {
	s := Series{Name: "shard replay (committed-offset records)", XLabel: "records", YLabel: "CPU seconds"}
	for _, n := range sizes {
		h := coordtest.New(coordinator.ConfigFrom(config.Defaults()))
		for g := 0; g < (n+999)/1000; g++ {
			for start := 0; start < 1000; start += 100 {
				commitOffsets(h, fmt.Sprintf("group-%06d", g), start, start+100)
			}
		}
		recs := h.Latest(1)
		sort.Slice(recs, func(i, j int) bool { return string(recs[i].Key) < string(recs[j].Key) })
		cfg := h.Cfg
		h = nil
		s.X = append(s.X, float64(len(recs)))
		s.Y = append(s.Y, median(3, func() {
			if _, err := coordtest.Replay(0, cfg, recs); err != nil {
				log.Fatal(err)
			}
		}))
	}
	return s
}

// offsetMemorySeries: Go heap held by a coordinator shard per committed offset (100 partitions
// per group, so groups grow with offsets too), measured after a GC.
func offsetMemorySeries(sizes []int) Series {
	s := Series{Name: "shard heap vs committed offsets", XLabel: "committed offsets", YLabel: "heap bytes"}
	for _, n := range sizes {
		s.X = append(s.X, float64(n))
		s.Y = append(s.Y, heapGrowth(func() *coordtest.Harness {
			h := coordtest.New(coordinator.ConfigFrom(config.Defaults()))
			for g := 0; g < n/100; g++ {
				commitOffsets(h, fmt.Sprintf("group-%06d", g), 0, 100)
			}
			return h
		}))
	}
	return s
}

// commitOffsets commits partitions [from, to) of topic "orders" for group in one OffsetCommit.
func commitOffsets(h *coordtest.Harness, group string, from, to int) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 8, group, -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = "orders"
	for p := from; p < to; p++ {
		t.Partitions = append(t.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: int32(p), Offset: int64(p), LeaderEpoch: -1})
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{t}
	coordtest.DoMeta(h, coordinator.Meta{APIVersion: 8}, coordinator.OffsetCommit(req))
}

// heapGrowth returns the live heap (after a GC) that the harness build returns holds, its
// record log excluded (the log is not shard state).
func heapGrowth(build func() *coordtest.Harness) float64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h := build()
	h.Log = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(h)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

type topicMeta struct{ parts map[assign.TopicID]int32 }

func (m topicMeta) Partitions(id assign.TopicID) int32 {
	if p, ok := m.parts[id]; ok {
		return p
	}
	return -1
}
func (m topicMeta) PartitionRacks(assign.TopicID, int32) []string { return nil }

// uniformSeries: uniform assignor, homogeneous, 10 topics, 50 partitions per member (the
// ServerSideAssignorBenchmark ratio), members and partitions growing together.
func uniformSeries(sizes []int) Series {
	s := Series{Name: "uniform assignor (members, 50 partitions each)", XLabel: "members", YLabel: "CPU seconds"}
	for _, n := range sizes {
		md := topicMeta{parts: map[assign.TopicID]int32{}}
		var topics []assign.TopicID
		for t := 0; t < 10; t++ {
			var id assign.TopicID
			id[0], id[1] = byte(t), 1
			md.parts[id] = int32(n * 50 / 10)
			topics = append(topics, id)
		}
		spec := &assign.GroupSpec{}
		for i := 0; i < n; i++ {
			spec.Members = append(spec.Members, assign.MemberSpec{MemberID: fmt.Sprintf("m%06d", i), Subscribed: topics})
		}
		s.X = append(s.X, float64(n))
		s.Y = append(s.Y, median(5, func() {
			if _, err := assign.Uniform().Assign(spec, md); err != nil {
				log.Fatal(err)
			}
		}))
	}
	return s
}

// streamsSeries: streams sticky assignor, 10 stateful subtopologies, 10 tasks per member, one
// standby, members and tasks growing together.
func streamsSeries(sizes []int) Series {
	s := Series{Name: "streams sticky assignor (members, 10 tasks each)", XLabel: "members", YLabel: "CPU seconds"}
	for _, n := range sizes {
		spec := &sassign.GroupSpec{NumStandbyReplicas: 1}
		for t := 0; t < 10; t++ {
			spec.Subtopologies = append(spec.Subtopologies, sassign.Subtopology{ID: fmt.Sprint(t), NumTasks: int32(n), Stateful: true})
		}
		for i := 0; i < n; i++ {
			spec.Members = append(spec.Members, sassign.MemberSpec{MemberID: fmt.Sprintf("m%06d", i), ProcessID: fmt.Sprintf("p%06d", i)})
		}
		s.X = append(s.X, float64(n))
		s.Y = append(s.Y, median(5, func() {
			if _, err := sassign.Sticky().Assign(spec); err != nil {
				log.Fatal(err)
			}
		}))
	}
	return s
}

// joinStormSeries: KIP-848 join storm on one coordinator shard (manual clock, default
// group.consumer.assignment.interval.ms): n members join one group over a fixed partition count
// at once and heartbeat every heartbeat interval until the group is Stable. CPU time of the whole
// storm against members.
func joinStormSeries(sizes []int, partitions int32) Series {
	s := Series{Name: fmt.Sprintf("consumer group join storm (members, %d partitions)", partitions), XLabel: "members", YLabel: "CPU seconds"}
	for _, n := range sizes {
		s.X = append(s.X, float64(n))
		s.Y = append(s.Y, median(3, func() {
			if _, err := coordtest.SimulateConsumerJoinStorm(coordinator.ConfigFrom(config.Defaults()), n, partitions, 50); err != nil {
				log.Fatal(err)
			}
		}))
	}
	return s
}

// median returns the median CPU time per call (user+system of the whole process, so GC work
// counts) of fn; CPU time is steadier than wall time on a shared 2-core machine. Each sample
// repeats fn until at least 50 ms of CPU have passed, so the kernel's accounting granularity
// does not distort small sizes.
func median(runs int, fn func()) float64 {
	fn() // warm up
	var ds []float64
	for i := 0; i < runs; i++ {
		runtime.GC()
		start := cpuTime()
		n := 0
		for {
			fn()
			n++
			if d := cpuTime() - start; d >= 50*time.Millisecond || n >= 1000 {
				ds = append(ds, d.Seconds()/float64(n))
				break
			}
		}
	}
	sort.Float64s(ds)
	return ds[len(ds)/2]
}

// Write renders one SVG per series and a README with the fitted slopes.
func Write(series []Series, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("# How cost grows\n\nGenerated by `go run ./tools/growth` on " + time.Now().UTC().Format("2006-01-02") +
		fmt.Sprintf(" (%d CPUs, %s). y is CPU seconds (user+system, GC included). Log-log least-squares slope: 1.0 is linear.\n\n| series | slope | points (x → y) | plot |\n|---|---|---|---|\n", runtime.NumCPU(), runtime.Version()))
	for _, s := range series {
		file := slug(s.Name) + ".svg"
		if err := plotSeries(s, filepath.Join(dir, file)); err != nil {
			return err
		}
		var pts []string
		for i := range s.X {
			pts = append(pts, fmt.Sprintf("%g → %.3g", s.X[i], s.Y[i]))
		}
		fmt.Fprintf(&md, "| %s | %.2f | %s | [%s](%s) |\n", s.Name, s.Slope(), strings.Join(pts, ", "), file, file)
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), []byte(md.String()), 0o644)
}

func plotSeries(s Series, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s — slope %.2f", s.Name, s.Slope())
	p.X.Label.Text, p.Y.Label.Text = s.XLabel, s.YLabel
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	pts := make(plotter.XYs, len(s.X))
	for i := range s.X {
		pts[i].X, pts[i].Y = s.X[i], s.Y[i]
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	p.Add(line, points)
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
