package coordtest

import (
	"fmt"
	"math/rand"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

// Workload is the mix of operations RandomWorkload sends to one shard.
type Workload int

// The workloads of the replay-equivalence property.
const (
	// Classic: classic-protocol members join, sync, heartbeat, leave and commit.
	Classic Workload = iota
	// Consumer: KIP-848 members join, reconcile, leave and commit, while topics change.
	Consumer
	// Streams: KIP-1071 members join with a topology, reconcile tasks, leave and commit.
	Streams
	// Migration: classic and KIP-848 members of the same group ids (online upgrade and
	// downgrade, group.consumer.migration.policy=bidirectional).
	Migration
	// Share: KIP-932 members join, leave and are fenced while they acquire, acknowledge and
	// release records of share-partitions, locks expire, and offsets are altered and deleted.
	Share
	// Transactional: classic and KIP-848 members while producers stage transactional offsets
	// (TxnOffsetCommit) that their markers commit or abort, racing plain commits, OffsetDelete,
	// DeleteGroups, expiry and restarts with transactions half-finished.
	Transactional
)

func (w Workload) String() string {
	return [...]string{"classic", "consumer", "streams", "migration", "share", "transactional"}[w]
}

// RandomWorkload runs steps random operations of the workload on a fresh harness (seeded), and
// after every step checks the replay-equivalence property: a fresh shard replaying the records
// written so far (latest value per key, shuffled) holds exactly the live shard's durable state,
// committed offsets included. Every few steps the shard is restarted from its records (timers
// re-armed), as a crash would. It returns the first difference, with the trace of operations
// that led to it, or "".
func RandomWorkload(w Workload, seed int64, steps int) string {
	rnd := rand.New(rand.NewSource(seed))
	overrides := []string{"group.initial.rebalance.delay.ms=0", "group.streams.initial.rebalance.delay.ms=0",
		"offsets.retention.ms=120000", "offsets.retention.check.interval.ms=15000"}
	if rnd.Intn(2) == 0 {
		overrides = append(overrides, "group.consumer.assignment.interval.ms=0")
	}
	// A small rebalance history bound, so its trimming (tombstones of the oldest events) is
	// replayed too.
	overrides = append(overrides, "muster.rebalance.history.max.events="+strconv.Itoa(2+rnd.Intn(4)))
	h := New(Config(overrides...))
	values := config.Defaults(overrides...)
	topics := h.WithTopics(nil)
	topics.Add("t1", 3)
	topics.Add("t2", 2)
	r := &randomRun{h: h, rnd: rnd, w: w, epochs: map[string]int32{}, owned: map[string][]kmsg.ConsumerGroupHeartbeatRequestTopic{},
		tasks: map[string][]kmsg.TaskIDs{}, classic: map[string]*classicClient{}, values: values, gconfigs: map[string]map[string]string{}}
	var trace []string
	for step := 0; step < steps; step++ {
		what := r.step()
		trace = append(trace, what)
		if diff := CheckReplay(h, seed+int64(step)); diff != "" {
			return fmt.Sprintf("%s workload, seed %d, step %d (%s): the durable state differs from a reload:\n%s\ntrace: %v", w, seed, step, what, diff, trace)
		}
		if step%25 == 24 {
			if err := h.Restart(seed + int64(step)); err != nil {
				return fmt.Sprintf("%s workload, seed %d, step %d: restart: %v", w, seed, step, err)
			}
			for _, c := range r.classic {
				c.join, c.sync = nil, nil // what was waiting is lost with the restart
			}
			trace = append(trace, "restart")
		}
	}
	return ""
}

type randomRun struct {
	h       *Harness
	rnd     *rand.Rand
	w       Workload
	epochs  map[string]int32
	owned   map[string][]kmsg.ConsumerGroupHeartbeatRequestTopic
	tasks   map[string][]kmsg.TaskIDs
	classic map[string]*classicClient
	// values are the broker's config; gconfigs the groups' dynamic configs set so far.
	values   *config.Values
	gconfigs map[string]map[string]string
	share    *shareRun
}

type classicClient struct {
	id   string
	gen  int32
	join *Result[*kmsg.JoinGroupResponse]
	sync *Result[*kmsg.SyncGroupResponse]
}

var (
	randomGroups  = []string{"g1", "g2"}
	randomMembers = []string{"a", "b", "c"}
)

func (r *randomRun) pick(xs []string) string { return xs[r.rnd.Intn(len(xs))] }

func (r *randomRun) step() string {
	n := r.rnd.Intn(100)
	switch {
	case n < 8:
		d := time.Duration(r.rnd.Intn(30_000)) * time.Millisecond
		r.h.Advance(d)
		return "advance " + d.String()
	case n < 14:
		return r.commit()
	case n < 17:
		return r.topicChange()
	case n < 19:
		g := r.pick(randomGroups)
		Do(r.h, coordinator.DeleteGroup(g))
		return "delete group " + g
	case n < 21:
		g := r.pick(randomGroups)
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = g
		req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
		Do(r.h, coordinator.OffsetDelete(req))
		return "offset delete " + g
	case n < 23:
		return r.groupConfigChange()
	}
	if r.w == Transactional && n < 60 {
		return r.txnOp()
	}
	switch r.w {
	case Classic:
		return r.classicOp()
	case Consumer:
		return r.consumerOp()
	case Streams:
		return r.streamsOp()
	case Share:
		return r.shareOp()
	default: // Migration, Transactional
		if r.rnd.Intn(2) == 0 {
			return r.classicOp()
		}
		return r.consumerOp()
	}
}

// groupConfigChange sets or removes a dynamic config of a random group (what an
// IncrementalAlterConfigs on a GROUP resource does); the harness hands the new snapshot to the
// shard before the next step.
func (r *randomRun) groupConfigChange() string {
	g := r.pick(randomGroups)
	keys := []string{coordinator.GroupConsumerSessionTimeoutMs, coordinator.GroupConsumerHeartbeatIntervalMs,
		coordinator.GroupConsumerAssignmentIntervalMs, coordinator.GroupStreamsSessionTimeoutMs,
		coordinator.GroupStreamsHeartbeatIntervalMs, coordinator.GroupStreamsNumStandbyReplicas,
		coordinator.GroupStreamsInitialRebalanceDelay}
	vals := map[string][]string{
		coordinator.GroupConsumerSessionTimeoutMs:     {"45000", "60000"},
		coordinator.GroupConsumerHeartbeatIntervalMs:  {"5000", "10000"},
		coordinator.GroupConsumerAssignmentIntervalMs: {"0", "2000"},
		coordinator.GroupStreamsSessionTimeoutMs:      {"45000", "60000"},
		coordinator.GroupStreamsHeartbeatIntervalMs:   {"5000", "10000"},
		coordinator.GroupStreamsNumStandbyReplicas:    {"0", "1", "2"},
		coordinator.GroupStreamsInitialRebalanceDelay: {"0", "3000"},
	}
	k := r.pick(keys)
	cfg := map[string]string{}
	for key, v := range r.gconfigs[g] {
		cfg[key] = v
	}
	what := "group config " + g + " " + k
	if _, ok := cfg[k]; ok && r.rnd.Intn(3) == 0 {
		delete(cfg, k)
		what += " deleted"
	} else {
		cfg[k] = r.pick(vals[k])
		what += "=" + cfg[k]
	}
	r.gconfigs[g] = cfg
	all := map[string]coordinator.GroupOverrides{}
	for id, c := range r.gconfigs {
		if len(c) > 0 {
			all[id] = coordinator.GroupOverridesFrom(scriptGroupValues{cfg: config.NewGroupConfig(c), values: r.values})
		}
	}
	r.h.GroupConfigs = coordinator.NewGroupConfigs(r.h.GroupConfigs.Version()+1, all)
	return what
}

func (r *randomRun) commit() string {
	g, m := r.pick(randomGroups), r.pick(randomMembers)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 9, g, -1
	if r.rnd.Intn(2) == 0 { // as a member, with what it knows
		key := g + "/" + m
		if c := r.classic[key]; c != nil && c.id != "" {
			req.MemberID, req.Generation, req.Version = c.id, c.gen, 8
		} else {
			req.MemberID, req.Generation = m, r.epochs[key]
		}
	}
	p := int32(r.rnd.Intn(3))
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: p, Offset: int64(r.rnd.Intn(1000)), LeaderEpoch: -1}}}}
	Do(r.h, coordinator.OffsetCommit(req))
	return fmt.Sprintf("commit %s/%s t1:%d", g, m, p)
}

// txnOp stages transactional offsets of a random producer (as a member of the group or without
// identity) or ends a producer's transaction with a commit or abort marker.
func (r *randomRun) txnOp() string {
	g, m := r.pick(randomGroups), r.pick(randomMembers)
	pid := int64(1 + r.rnd.Intn(3))
	if r.rnd.Intn(3) == 0 {
		commit := r.rnd.Intn(3) != 0
		Do(r.h, coordinator.CompleteTransaction(pid, 0, commit))
		return fmt.Sprintf("txn end producer %d commit=%v", pid, commit)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 3, g, -1
	req.TransactionalID, req.ProducerID = fmt.Sprintf("txn-%d", pid), pid
	if r.rnd.Intn(2) == 0 {
		key := g + "/" + m
		if c := r.classic[key]; c != nil && c.id != "" {
			req.MemberID, req.Generation = c.id, c.gen
		} else {
			req.MemberID, req.Generation = "cg-"+m, r.epochs[key]
		}
	}
	t := kmsg.TxnOffsetCommitRequestTopic{Topic: "t1"}
	for p := int32(0); p < 3; p++ {
		if r.rnd.Intn(2) == 0 {
			t.Partitions = append(t.Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: p, Offset: int64(r.rnd.Intn(1000)), LeaderEpoch: -1})
		}
	}
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{t}
	Do(r.h, coordinator.TxnOffsetCommit(req))
	return fmt.Sprintf("txn commit %s/%s producer %d %d partitions", g, m, pid, len(t.Partitions))
}

func (r *randomRun) topicChange() string {
	switch r.rnd.Intn(3) {
	case 0:
		n := int32(2 + r.rnd.Intn(4))
		r.h.Topics.Add("t2", n)
		return fmt.Sprintf("resize t2 to %d", n)
	case 1:
		r.h.Topics.Delete("t2")
		return "delete t2"
	default:
		r.h.Topics.Add("t3", 2)
		return "create t3"
	}
}

func (r *randomRun) classicOp() string {
	g, m := r.pick(randomGroups), r.pick(randomMembers)
	key := g + "/" + m
	c := r.classic[key]
	if c == nil {
		c = &classicClient{}
		r.classic[key] = c
	}
	r.observe(c)
	cid := m
	meta := coordinator.Meta{APIVersion: 5, ClientID: &cid, ClientHost: "/127.0.0.1"}
	switch r.rnd.Intn(4) {
	case 0, 1:
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group, req.MemberID = 5, g, c.id
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = 10000, 20000, "consumer"
		md := kmsg.NewConsumerMemberMetadata()
		md.Version, md.Topics = 3, []string{"t1"}
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
		c.join = DoMeta(r.h, meta, coordinator.JoinGroup(req))
		r.observe(c)
		return "classic join " + key
	case 2:
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version, req.Group, req.MemberID, req.Generation = 5, g, c.id, c.gen
		a := kmsg.NewConsumerMemberAssignment()
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t1", Partitions: []int32{0}}}
		req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: c.id, MemberAssignment: a.AppendTo(nil)}}
		c.sync = DoMeta(r.h, meta, coordinator.SyncGroup(req))
		r.observe(c)
		return "classic sync " + key
	default:
		if r.rnd.Intn(3) == 0 {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Version, req.Group = 5, g
			req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: c.id}}
			DoMeta(r.h, meta, coordinator.LeaveGroup(req))
			c.id, c.gen = "", 0
			return "classic leave " + key
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.Generation = 4, g, c.id, c.gen
		DoMeta(r.h, meta, coordinator.Heartbeat(req))
		return "classic heartbeat " + key
	}
}

// observe updates a classic client from its answered calls, as a real consumer would.
func (r *randomRun) observe(c *classicClient) {
	if c.join != nil && c.join.Done() {
		if resp := c.join.Resp; resp != nil {
			if resp.MemberID != "" {
				c.id = resp.MemberID
			}
			if resp.ErrorCode == 0 {
				c.gen = resp.Generation
			}
		}
		c.join = nil
	}
	if c.sync != nil && c.sync.Done() {
		c.sync = nil
	}
}

func (r *randomRun) consumerOp() string {
	g, m := r.pick(randomGroups), r.pick(randomMembers)
	key := g + "/" + m
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID = 1, g, "cg-"+m
	req.RebalanceTimeoutMillis = -1
	epoch, joined := r.epochs[key]
	what := "consumer heartbeat " + key
	switch k := r.rnd.Intn(10); {
	case !joined || epoch <= 0 || k == 0:
		req.MemberEpoch, req.RebalanceTimeoutMillis = 0, 20000
		req.SubscribedTopicNames = []string{"t1", "t2"}
		if r.rnd.Intn(3) == 0 {
			re := "t.*"
			req.SubscribedTopicNames, req.SubscribedTopicRegex = nil, &re
		}
		if r.rnd.Intn(3) == 0 {
			inst := "i-" + m
			req.InstanceID = &inst
		}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		what = "consumer join " + key
	case k == 1:
		req.MemberEpoch = -1
		what = "consumer leave " + key
	default:
		req.MemberEpoch, req.Topics = epoch, append([]kmsg.ConsumerGroupHeartbeatRequestTopic{}, r.owned[key]...)
	}
	resp := Do(r.h, coordinator.ConsumerGroupHeartbeat(req)).Resp
	if resp.ErrorCode != 0 || req.MemberEpoch == -1 {
		delete(r.epochs, key)
		delete(r.owned, key)
		return what
	}
	r.epochs[key] = resp.MemberEpoch
	if resp.Assignment != nil {
		var owned []kmsg.ConsumerGroupHeartbeatRequestTopic
		for _, t := range resp.Assignment.Topics {
			owned = append(owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: t.Partitions})
		}
		r.owned[key] = owned
	}
	return what
}

func (r *randomRun) streamsOp() string {
	g, m := r.pick(randomGroups), r.pick(randomMembers)
	key := g + "/" + m
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID = 1, g, "s-"+m
	req.RebalanceTimeoutMillis = -1
	epoch, joined := r.epochs[key]
	what := "streams heartbeat " + key
	switch k := r.rnd.Intn(10); {
	case !joined || k == 0:
		req.MemberEpoch, req.RebalanceTimeoutMillis = 0, 20000
		p := "process-" + m
		req.ProcessID = &p
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID, sub.SourceTopics = "0", []string{"t1"}
		cl := kmsg.NewTopicInfo()
		cl.Topic = g + "-store-changelog"
		sub.StateChangelogTopics = []kmsg.TopicInfo{cl}
		// A second subtopology reads t2, which the workload resizes and deletes: the topology
		// then cannot be configured and its tasks are revoked until t2 returns.
		sub2 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub2.SubtopologyID, sub2.SourceTopics = "1", []string{"t2"}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub, sub2}
		req.Topology = &topo
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		what = "streams join " + key
	case k == 1:
		req.MemberEpoch = -1
		what = "streams leave " + key
	default:
		req.MemberEpoch = epoch
		t := r.tasks[key]
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = nonNil(t), []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	res := Do(r.h, coordinator.StreamsGroupHeartbeat(req)).Resp
	for _, t := range res.Create {
		_ = r.h.Topics.CreateTopic(t.Name, t.Partitions, t.Configs)
	}
	resp := res.Response
	if resp.ErrorCode != 0 || req.MemberEpoch == -1 {
		delete(r.epochs, key)
		delete(r.tasks, key)
		return what
	}
	r.epochs[key] = resp.MemberEpoch
	if resp.ActiveTasks != nil {
		r.tasks[key] = append([]kmsg.TaskIDs{}, resp.ActiveTasks...)
	}
	return what
}
