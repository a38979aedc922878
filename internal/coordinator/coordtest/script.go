package coordtest

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator"
)

// RunScripts runs every scenario file under dir (cockroachdb/datadriven, as etcd-io/raft's
// interaction tests): each file drives one fresh shard through commands and compares what the
// shard answered with the expected output (`go test -run X -rewrite` regenerates it; review
// the diff). After every command the durable state is checked against a reload of the records
// written so far, so each scenario is a replay-equivalence test too.
//
// Commands (key=value arguments; durations like 5s):
//
//	config key=value ...            broker config overrides (first command only)
//	group-config group=g key=value ...  set a group's dynamic configs (IncrementalAlterConfigs
//	                                    SET; value "-" deletes the key), validated as the data
//	                                    plane validates them, handed to the shard before the
//	                                    next command
//	topic name=t partitions=4       create or resize a topic
//	delete-topic name=t             delete a topic
//	join group=g member=m|new [version=9] [client=c] [instance=i] [session=10s] [rebalance=30s] [protocols=range,...] [subscribe=t1,t2]
//	sync group=g member=m gen=N [version=3] [instance=i] [assign=m1:x,m2:t=0+1;u=2]
//	heartbeat group=g member=m gen=N [version=4] [instance=i]
//	leave group=g members=m1,m2 [instances=i1,i2] [version=5]
//	cg-heartbeat group=g member=m epoch=N|current [subscribe=t1,t2] [regex=r] [owned=assigned|none|t:0,1;u:2] [instance=i] [rebalance=30s] [interval=show] [describable=t1,t2]
//	cg-describe group=g
//	topology name=x epoch=N subtopologies=0:src=in;changelog=c,1:src=...
//	streams-heartbeat group=g member=m epoch=N|current process=p [topology=x] [tasks=assigned|none] [interval=show]
//	streams-describe group=g
//	commit group=g offsets=t:0=5,t:1=7 [member=m] [gen=N|current] [version=8]
//	fetch group=g [topics=t:0,1] [stable=true]
//	txn-commit group=g producer=P [epoch=E] offsets=t:0=5 [member=m] [gen=N|current] [instance=i] [version=3] [metadata=x]
//	txn-end producer=P result=commit|abort [epoch=E]   the transaction marker reaching the shard
//	delete-offsets group=g offsets=t:0,1
//	describe group=g                classic DescribeGroups
//	list                            ListGroups
//	delete-groups groups=g,h
//	advance 5s                      move the clock and fire due timers
//	history group=g                 the group's rebalance history (epoch bumps and their causes)
//	records                         the records written since the last `records`
//	reload                          restart the shard from its records (timers re-armed)
//
// describable= (join, cg-heartbeat) lists the only topics the request's principal may DESCRIBE
// (Meta.DescribableTopic): a regex refresh it triggers resolves to those alone.
//
// Member ids: the harness's ids are deterministic; `member=new` sends an empty member id, and
// a classic or consumer member is named in later commands by the id the shard gave it or by its
// client id (client=c), which the runner maps.
func RunScripts(t *testing.T, dir string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		s := &script{t: t}
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	t        *testing.T
	h        *Harness
	values   *config.Values               // the broker config (bounds of group configs)
	gconfigs map[string]map[string]string // group → dynamic configs set by group-config
	pending  []pendingCall
	alias    map[string]string // client id → member id
	assigned map[string][]kmsg.ConsumerGroupHeartbeatRequestTopic
	tasks    map[string]streamsTasks
	epochs   map[string]int32 // group/member → the member epoch the shard last gave
	topos    map[string]*kmsg.StreamsGroupHeartbeatRequestTopology
	logged   int                 // records already shown by `records`
	logs     map[string]shareLog // "topic:partition" → the log a share fetch sees
	wakeSeq  uint64              // the share wake-up count the last share command saw
}

type pendingCall struct {
	what string
	done func() bool
	show func() string
}

type streamsTasks struct{ active, standby, warmup []kmsg.TaskIDs }

func (s *script) harness(overrides ...string) *Harness {
	if s.h == nil {
		s.values = config.Defaults(overrides...)
		s.gconfigs = map[string]map[string]string{}
		s.h = New(Config(overrides...))
		s.h.WithTopics(nil)
		s.alias = map[string]string{}
		s.assigned = map[string][]kmsg.ConsumerGroupHeartbeatRequestTopic{}
		s.tasks = map[string]streamsTasks{}
		s.epochs = map[string]int32{}
		s.topos = map[string]*kmsg.StreamsGroupHeartbeatRequestTopology{}
	}
	return s.h
}

func (s *script) run(t *testing.T, d *datadriven.TestData) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = fmt.Sprintf("error: %v\n", r)
		}
	}()
	var b strings.Builder
	if d.Cmd == "config" {
		if s.h != nil {
			d.Fatalf(t, "config must be the first command")
		}
		var ov []string
		for _, a := range d.CmdArgs {
			ov = append(ov, a.Key+"="+strings.Join(a.Vals, ","))
		}
		s.harness(ov...)
		return "ok\n"
	}
	h := s.harness()
	a := args{d: d, t: t}
	switch d.Cmd {
	case "topic":
		h.Topics.Add(a.str("name"), int32(a.int("partitions", 1)))
		b.WriteString("ok\n")
	case "delete-topic":
		h.Topics.Delete(a.str("name"))
		b.WriteString("ok\n")
	case "join":
		s.join(&b, a)
	case "sync":
		s.sync(&b, a)
	case "heartbeat":
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version = int16(a.int("version", 4))
		req.Group, req.MemberID, req.Generation = a.str("group"), s.member(a.str("member")), int32(a.int("gen", -1))
		req.InstanceID = a.opt("instance")
		r := DoMeta(h, meta(req.Version, a), coordinator.Heartbeat(req))
		fmt.Fprintf(&b, "heartbeat %s: %s\n", a.str("member"), errName(r.Resp.ErrorCode))
	case "leave":
		s.leave(&b, a)
	case "group-config":
		s.groupConfig(&b, d)
	case "cg-heartbeat":
		s.cgHeartbeat(&b, a)
	case "cg-describe":
		for _, g := range Do(h, coordinator.ConsumerGroupDescribe([]string{a.str("group")}, 1)).Resp {
			s.showCGDescribe(&b, g)
		}
	case "topology":
		s.topology(&b, a)
	case "streams-heartbeat":
		s.streamsHeartbeat(&b, a)
	case "streams-describe":
		for _, g := range Do(h, coordinator.DescribeStreamsGroups([]string{a.str("group")}, 1)).Resp.Groups {
			s.showStreamsDescribe(&b, g)
		}
	case "commit":
		s.commit(&b, a)
	case "fetch":
		s.fetch(&b, a)
	case "txn-commit":
		s.txnCommit(&b, a)
	case "txn-end":
		commit := a.str("result") == "commit"
		r := Do(h, coordinator.CompleteTransaction(int64(a.int("producer", 0)), int16(a.int("epoch", 0)), commit))
		fmt.Fprintf(&b, "txn-end %s: %s\n", a.str("result"), errOf(r.Err))
	case "delete-offsets":
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = a.str("group")
		for _, tp := range a.partitions("offsets") {
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = tp.topic
			for _, p := range tp.parts {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteRequestTopicPartition{Partition: p})
			}
			req.Topics = append(req.Topics, rt)
		}
		r := Do(h, coordinator.OffsetDelete(req)).Resp
		fmt.Fprintf(&b, "delete-offsets: %s", errName(r.ErrorCode))
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				fmt.Fprintf(&b, " %s:%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
			}
		}
		b.WriteString("\n")
	case "describe":
		for _, g := range Do(h, coordinator.DescribeGroups([]string{a.str("group")}, 5)).Resp {
			fmt.Fprintf(&b, "group %s: %s %s protocol=%q type=%q\n", g.Group, errName(g.ErrorCode), g.State, g.Protocol, g.ProtocolType)
			for _, m := range g.Members {
				fmt.Fprintf(&b, "  member %s client=%s assignment=%q\n", s.name(m.MemberID), m.ClientID, m.MemberAssignment)
			}
		}
	case "list":
		for _, g := range Do(h, coordinator.ListGroups(nil, nil)).Resp {
			fmt.Fprintf(&b, "%s %s %s\n", g.Group, g.GroupType, g.GroupState)
		}
		if b.Len() == 0 {
			b.WriteString("no groups\n")
		}
	case "delete-groups":
		for _, g := range a.list("groups") {
			r := Do(h, coordinator.DeleteGroup(g))
			fmt.Fprintf(&b, "delete %s: %s\n", g, errOf(r.Err))
		}
	case "advance":
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			d.Fatalf(t, "advance: %v", err)
		}
		h.Advance(dur)
		fmt.Fprintf(&b, "now +%s\n", h.Clock.Now().Sub(T0))
	case "history":
		// The group's rebalance history (coordinator.RebalanceHistory), oldest first.
		group := a.str("group")
		events := Do(h, coordinator.RebalanceHistory(group)).Resp
		for _, e := range events {
			fmt.Fprintf(&b, "#%d %s\n", e.Seq, s.event(e))
		}
		if len(events) == 0 {
			b.WriteString("no history\n")
		}
	case "records":
		for _, r := range h.Log[s.logged:] {
			b.WriteString(s.record(r))
			b.WriteString("\n")
		}
		s.logged = len(h.Log)
		if b.Len() == 0 {
			b.WriteString("no records\n")
		}
	case "reload":
		if err := h.Restart(1); err != nil {
			d.Fatalf(t, "reload: %v", err)
		}
		for _, p := range s.pending { // a restarted shard never answers what was waiting
			if !p.done() {
				fmt.Fprintf(&b, "%s: lost with the restart\n", p.what)
			}
		}
		s.pending = nil
		b.WriteString("reloaded\n")
	default:
		if !s.shareCommand(&b, a, d.Cmd) {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
	}
	s.released(&b)
	if err := CheckReplay(h, int64(d.Pos[len(d.Pos)-1])); err != "" {
		t.Fatalf("%s: %s: the durable state differs from a reload of the records:\n%s", d.Pos, d.Cmd, err)
	}
	return b.String()
}

// released prints the answers of calls that were waiting and are now released.
func (s *script) released(b *strings.Builder) {
	var still []pendingCall
	for _, p := range s.pending {
		if p.done() {
			fmt.Fprintf(b, "-> %s\n", p.show())
			continue
		}
		still = append(still, p)
	}
	s.pending = still
}

// CheckReplay compares the harness's durable state with a fresh shard replaying its records
// (shuffled by seed): "" when equal, else the differences.
func CheckReplay(h *Harness, seed int64) string {
	re, err := h.Reload(seed)
	if err != nil {
		return "reload: " + err.Error()
	}
	live, got := DurableView(h.St), DurableView(re)
	if reflect.DeepEqual(live, got) {
		return ""
	}
	keys := map[string]bool{}
	for k := range live {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var out strings.Builder
	for _, k := range ks {
		if !reflect.DeepEqual(live[k], got[k]) {
			fmt.Fprintf(&out, "  %s\n    live:     %+v\n    reloaded: %+v\n", k, live[k], got[k])
		}
	}
	return out.String()
}

func (s *script) member(name string) string {
	if name == "new" {
		return ""
	}
	if id, ok := s.alias[name]; ok {
		return id
	}
	return name
}

// name shows a member id as the client alias it was given to, when there is one.
func (s *script) name(id string) string {
	for alias, full := range s.alias {
		if full == id && id != "" {
			return alias
		}
	}
	return id
}

// epoch reads epoch=N, or epoch=current: the epoch the shard last gave the member.
func (s *script) epoch(a args, key string) int32 {
	if a.strOr("epoch", "") == "current" {
		return s.epochs[key]
	}
	return int32(a.int("epoch", 0))
}

func meta(version int16, a args) coordinator.Meta {
	cid := a.strOr("client", "client")
	m := coordinator.Meta{APIVersion: version, ClientID: &cid, ClientHost: "/127.0.0.1"}
	if a.has("describable") {
		allowed := map[string]bool{}
		for _, t := range a.list("describable") {
			allowed[t] = true
		}
		m.DescribableTopic = func(t string) bool { return allowed[t] }
	}
	return m
}

func (s *script) join(b *strings.Builder, a args) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = int16(a.int("version", 9))
	req.Group, req.MemberID = a.str("group"), s.member(a.str("member"))
	req.InstanceID = a.opt("instance")
	req.SessionTimeoutMillis = int32(a.dur("session", 10*time.Second) / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(a.dur("rebalance", 30*time.Second) / time.Millisecond)
	req.ProtocolType = a.strOr("type", "consumer")
	md := func(p string) []byte { return []byte("md-" + p) }
	if subs := a.list("subscribe"); subs != nil { // a ConsumerProtocol subscription
		md = func(string) []byte {
			m := kmsg.NewConsumerMemberMetadata()
			m.Version, m.Topics = 3, subs
			return m.AppendTo(nil)
		}
	}
	for _, p := range a.listOr("protocols", []string{"range"}) {
		req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: md(p)})
	}
	client := a.strOr("client", "client")
	r := DoMeta(s.h, meta(req.Version, a), coordinator.JoinGroup(req))
	show := func() string {
		resp := r.Resp
		if r.Err != nil || resp == nil {
			return fmt.Sprintf("join %s: %s", client, errOf(r.Err))
		}
		if resp.MemberID != "" {
			s.alias[client] = resp.MemberID
		}
		out := fmt.Sprintf("join %s: %s member=%s gen=%d protocol=%s leader=%s", client, errName(resp.ErrorCode), s.name(resp.MemberID),
			resp.Generation, str(resp.Protocol), s.name(resp.LeaderID))
		if len(resp.Members) > 0 {
			var ms []string
			for _, m := range resp.Members {
				ms = append(ms, s.name(m.MemberID))
			}
			sort.Strings(ms)
			out += " members=" + strings.Join(ms, ",")
		}
		return out
	}
	if !r.Done() {
		fmt.Fprintf(b, "join %s: waiting\n", client)
		s.pending = append(s.pending, pendingCall{what: "join " + client, done: r.Done, show: show})
		return
	}
	b.WriteString(show() + "\n")
}

func (s *script) sync(b *strings.Builder, a args) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = int16(a.int("version", 5))
	req.Group, req.MemberID, req.Generation = a.str("group"), s.member(a.str("member")), int32(a.int("gen", -1))
	req.InstanceID = a.opt("instance")
	req.ProtocolType, req.Protocol = a.opt("type"), a.opt("protocol")
	for _, kv := range a.list("assign") {
		m, v, _ := strings.Cut(kv, ":")
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: s.member(m), MemberAssignment: assignment(v)})
	}
	name := a.str("member")
	r := DoMeta(s.h, meta(req.Version, a), coordinator.SyncGroup(req))
	show := func() string {
		if r.Err != nil || r.Resp == nil {
			return fmt.Sprintf("sync %s: %s", name, errOf(r.Err))
		}
		return fmt.Sprintf("sync %s: %s assignment=%q", name, errName(r.Resp.ErrorCode), r.Resp.MemberAssignment)
	}
	if !r.Done() {
		fmt.Fprintf(b, "sync %s: waiting\n", name)
		s.pending = append(s.pending, pendingCall{what: "sync " + name, done: r.Done, show: show})
		return
	}
	b.WriteString(show() + "\n")
}

// assignment encodes a SyncGroup assignment: "t=0+1;u=2" is a ConsumerProtocol assignment of
// those partitions, anything else opaque bytes.
func assignment(v string) []byte {
	if !strings.Contains(v, "=") {
		return []byte(v)
	}
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 3
	for _, tp := range strings.Split(v, ";") {
		topic, ps, _ := strings.Cut(tp, "=")
		t := kmsg.ConsumerMemberAssignmentTopic{Topic: topic}
		for _, p := range strings.Split(ps, "+") {
			n, _ := strconv.Atoi(p)
			t.Partitions = append(t.Partitions, int32(n))
		}
		a.Topics = append(a.Topics, t)
	}
	return a.AppendTo(nil)
}

func (s *script) leave(b *strings.Builder, a args) {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = int16(a.int("version", 5))
	req.Group = a.str("group")
	if req.Version < 3 {
		req.MemberID = s.member(a.str("member"))
	}
	ids, insts := a.list("members"), a.list("instances")
	for i := 0; i < max(len(ids), len(insts)); i++ {
		m := kmsg.NewLeaveGroupRequestMember()
		if i < len(ids) {
			m.MemberID = s.member(ids[i])
		}
		if i < len(insts) {
			m.InstanceID = &insts[i]
		}
		req.Members = append(req.Members, m)
	}
	r := DoMeta(s.h, meta(req.Version, a), coordinator.LeaveGroup(req)).Resp
	fmt.Fprintf(b, "leave: %s", errName(r.ErrorCode))
	for _, m := range r.Members {
		fmt.Fprintf(b, " %s=%s", orStr(s.name(m.MemberID), str(m.InstanceID)), errName(m.ErrorCode))
	}
	b.WriteString("\n")
}

// groupConfig sets a group's dynamic configs: the new set is validated as IncrementalAlterConfigs
// validates it (config.ValidateGroupConfigs), then every group's overrides become the snapshot
// the harness hands the shard (as api.GroupConfigView does for the engine).
func (s *script) groupConfig(b *strings.Builder, d *datadriven.TestData) {
	group := ""
	next := map[string]*string{}
	for _, arg := range d.CmdArgs {
		if arg.Key == "group" {
			group = strings.Join(arg.Vals, ",")
		}
	}
	for k, v := range s.gconfigs[group] {
		v := v
		next[k] = &v
	}
	for _, arg := range d.CmdArgs {
		if arg.Key == "group" {
			continue
		}
		v := strings.Join(arg.Vals, ",")
		if v == "-" {
			delete(next, arg.Key)
			continue
		}
		next[arg.Key] = &v
	}
	if msg := config.ValidateGroupConfigs(s.values, next); msg != "" {
		fmt.Fprintf(b, "group-config %s: INVALID_CONFIG %s\n", group, msg)
		return
	}
	m := map[string]string{}
	for k, v := range next {
		m[k] = *v
	}
	s.gconfigs[group] = m
	all := map[string]coordinator.GroupOverrides{}
	for g, cfg := range s.gconfigs {
		if len(cfg) > 0 {
			all[g] = coordinator.GroupOverridesFrom(scriptGroupValues{cfg: config.NewGroupConfig(cfg), values: s.values})
		}
	}
	s.h.GroupConfigs = coordinator.NewGroupConfigs(s.h.GroupConfigs.Version()+1, all)
	fmt.Fprintf(b, "group-config %s: NONE\n", group)
}

// scriptGroupValues reads a group's overrides clamped to the broker's bounds.
type scriptGroupValues struct {
	cfg    config.GroupConfig
	values *config.Values
}

func (v scriptGroupValues) GroupString(name string) (string, bool) { return v.cfg.Get(name) }

func (v scriptGroupValues) GroupInt(name string) (int64, bool) {
	if _, ok := v.cfg.Get(name); !ok {
		return 0, false
	}
	return v.cfg.Int(v.values, name), true
}

func (s *script) cgHeartbeat(b *strings.Builder, a args) {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = int16(a.int("version", 1))
	name := a.str("member")
	req.Group, req.MemberID, req.MemberEpoch = a.str("group"), s.member(name), s.epoch(a, a.str("group")+"/"+name)
	req.InstanceID = a.opt("instance")
	req.RebalanceTimeoutMillis = -1
	if req.MemberEpoch == 0 {
		req.RebalanceTimeoutMillis = int32(a.dur("rebalance", 30*time.Second) / time.Millisecond)
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	if a.has("subscribe") {
		req.SubscribedTopicNames = a.list("subscribe")
	}
	req.SubscribedTopicRegex = a.opt("regex")
	req.ServerAssignor = a.opt("assignor")
	switch owned := a.strOr("owned", ""); owned {
	case "":
	case "assigned":
		req.Topics = append([]kmsg.ConsumerGroupHeartbeatRequestTopic{}, s.assigned[req.Group+"/"+name]...)
	case "none":
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	default:
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, tp := range a.partitions("owned") {
			req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: s.h.Topics.ID(tp.topic), Partitions: tp.parts})
		}
	}
	r := DoMeta(s.h, meta(req.Version, a), coordinator.ConsumerGroupHeartbeat(req)).Resp
	if r.MemberID != nil && *r.MemberID != "" && name == "new" {
		name = a.strOr("client", "client")
	}
	if r.MemberID != nil && *r.MemberID != "" {
		s.alias[name] = *r.MemberID
	}
	s.epochs[req.Group+"/"+name] = r.MemberEpoch
	fmt.Fprintf(b, "cg-heartbeat %s: %s epoch=%d", name, errName(r.ErrorCode), r.MemberEpoch)
	if a.strOr("interval", "") == "show" {
		fmt.Fprintf(b, " interval=%s", time.Duration(r.HeartbeatIntervalMillis)*time.Millisecond)
	}
	if r.ErrorMessage != nil {
		fmt.Fprintf(b, " message=%q", *r.ErrorMessage)
	}
	if r.Assignment != nil {
		var owned []kmsg.ConsumerGroupHeartbeatRequestTopic
		for _, t := range r.Assignment.Topics {
			owned = append(owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: t.Partitions})
		}
		s.assigned[req.Group+"/"+name] = owned
		fmt.Fprintf(b, " assignment=%s", s.cgTopics(r.Assignment.Topics))
	}
	b.WriteString("\n")
}

func (s *script) cgTopics(ts []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic) string {
	var parts []string
	for _, t := range ts {
		name, _ := s.h.Topics.Image().TopicName(t.TopicID)
		parts = append(parts, fmt.Sprintf("%s:%s", name, ints(t.Partitions)))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ";")
}

func (s *script) showCGDescribe(b *strings.Builder, g kmsg.ConsumerGroupDescribeResponseGroup) {
	fmt.Fprintf(b, "group %s: %s %s epoch=%d assignment-epoch=%d assignor=%s\n", g.Group, errName(g.ErrorCode), g.State, g.Epoch, g.AssignmentEpoch, g.AssignorName)
	ms := append([]kmsg.ConsumerGroupDescribeResponseGroupMember(nil), g.Members...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].MemberID < ms[j].MemberID })
	for _, m := range ms {
		fmt.Fprintf(b, "  member %s epoch=%d assigned=%s target=%s\n", s.name(m.MemberID), m.MemberEpoch, s.tps(m.Assignment.TopicPartitions), s.tps(m.TargetAssignment.TopicPartitions))
	}
}

func (s *script) tps(ts []kmsg.AssignmentTopicPartition) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s:%s", t.Topic, ints(t.Partitions)))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ";")
}

// topology defines a named streams topology: subtopologies=ID:src=a+b;changelog=c,ID2:...
func (s *script) topology(b *strings.Builder, a args) {
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topo.Epoch = int32(a.int("epoch", 0))
	for _, sub := range a.list("subtopologies") {
		id, spec, _ := strings.Cut(sub, ":")
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID = id
		for _, kv := range strings.Split(spec, ";") {
			k, v, _ := strings.Cut(kv, "=")
			for _, name := range strings.Split(v, "+") {
				switch k {
				case "src":
					st.SourceTopics = append(st.SourceTopics, name)
				case "changelog":
					ti := kmsg.NewTopicInfo()
					ti.Topic = name
					st.StateChangelogTopics = append(st.StateChangelogTopics, ti)
				case "repartition":
					ti := kmsg.NewTopicInfo()
					ti.Topic = name
					st.RepartitionSourceTopics = append(st.RepartitionSourceTopics, ti)
				}
			}
		}
		topo.Subtopologies = append(topo.Subtopologies, st)
	}
	s.topos[a.str("name")] = &topo
	b.WriteString("ok\n")
}

func (s *script) streamsHeartbeat(b *strings.Builder, a args) {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = int16(a.int("version", 1))
	name := a.str("member")
	req.Group, req.MemberID, req.MemberEpoch = a.str("group"), name, s.epoch(a, a.str("group")+"/"+name)
	req.RebalanceTimeoutMillis = -1
	if req.MemberEpoch == 0 {
		req.RebalanceTimeoutMillis = int32(a.dur("rebalance", 30*time.Second) / time.Millisecond)
		req.ProcessID = a.opt("process")
		if req.ProcessID == nil {
			p := "process-" + name
			req.ProcessID = &p
		}
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	if tn := a.strOr("topology", ""); tn != "" {
		req.Topology = s.topos[tn]
	}
	key := req.Group + "/" + name
	if a.strOr("tasks", "") == "assigned" {
		t := s.tasks[key]
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = nonNil(t.active), nonNil(t.standby), nonNil(t.warmup)
	}
	res := DoMeta(s.h, meta(req.Version, a), coordinator.StreamsGroupHeartbeat(req)).Resp
	for _, t := range res.Create {
		_ = s.h.Topics.CreateTopic(t.Name, t.Partitions, t.Configs)
	}
	r := res.Response
	s.epochs[key] = r.MemberEpoch
	fmt.Fprintf(b, "streams-heartbeat %s: %s epoch=%d", name, errName(r.ErrorCode), r.MemberEpoch)
	if a.strOr("interval", "") == "show" {
		fmt.Fprintf(b, " interval=%s", time.Duration(r.HeartbeatIntervalMillis)*time.Millisecond)
	}
	if r.ErrorMessage != nil {
		fmt.Fprintf(b, " message=%q", *r.ErrorMessage)
	}
	for _, st := range r.Status {
		fmt.Fprintf(b, " status=%d", st.StatusCode)
	}
	if r.ActiveTasks != nil {
		t := streamsTasks{active: toReqTasks(r.ActiveTasks), standby: toReqTasks(r.StandbyTasks), warmup: toReqTasks(r.WarmupTasks)}
		s.tasks[key] = t
		fmt.Fprintf(b, " active=%s standby=%s warmup=%s", taskStr(r.ActiveTasks), taskStr(r.StandbyTasks), taskStr(r.WarmupTasks))
	}
	b.WriteString("\n")
}

func nonNil(t []kmsg.TaskIDs) []kmsg.TaskIDs {
	if t == nil {
		return []kmsg.TaskIDs{}
	}
	return t
}

func toReqTasks(ts []kmsg.TaskIDs) []kmsg.TaskIDs { return append([]kmsg.TaskIDs{}, ts...) }

func taskStr(ts []kmsg.TaskIDs) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.SubtopologyID+":"+ints(t.Partitions))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ";")
}

func (s *script) showStreamsDescribe(b *strings.Builder, g kmsg.StreamsGroupDescribeResponseGroup) {
	fmt.Fprintf(b, "group %s: %s %s epoch=%d assignment-epoch=%d", g.Group, errName(g.ErrorCode), g.State, g.Epoch, g.AssignmentEpoch)
	if g.Topology != nil {
		fmt.Fprintf(b, " topology-epoch=%d", g.Topology.Epoch)
	}
	b.WriteString("\n")
	ms := append([]kmsg.StreamsGroupDescribeResponseGroupMember(nil), g.Members...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].MemberID < ms[j].MemberID })
	for _, m := range ms {
		fmt.Fprintf(b, "  member %s epoch=%d process=%s active=%s\n", m.MemberID, m.MemberEpoch, m.ProcessID, taskStr(m.Assignment.ActiveTasks))
	}
}

func (s *script) commit(b *strings.Builder, a args) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = int16(a.int("version", 8))
	req.Group, req.Generation = a.str("group"), int32(a.int("gen", -1))
	if a.has("member") {
		req.MemberID = s.member(a.str("member"))
		if a.strOr("gen", "") == "current" {
			req.Generation = s.epochs[req.Group+"/"+a.str("member")]
		}
	}
	req.InstanceID = a.opt("instance")
	byTopic := map[string]int{}
	for _, spec := range a.list("offsets") {
		tp, off, _ := strings.Cut(spec, "=")
		topic, ps, _ := strings.Cut(tp, ":")
		p, _ := strconv.Atoi(ps)
		o, _ := strconv.ParseInt(off, 10, 64)
		i, ok := byTopic[topic]
		if !ok {
			i = len(req.Topics)
			byTopic[topic] = i
			req.Topics = append(req.Topics, kmsg.OffsetCommitRequestTopic{Topic: topic})
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: int32(p), Offset: o, LeaderEpoch: -1})
	}
	r := DoMeta(s.h, meta(req.Version, a), coordinator.OffsetCommit(req)).Resp
	b.WriteString("commit:")
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(b, " %s:%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
		}
	}
	b.WriteString("\n")
}

func (s *script) txnCommit(b *strings.Builder, a args) {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = int16(a.int("version", 3))
	req.TransactionalID = "txn"
	req.Group, req.Generation = a.str("group"), int32(a.int("gen", -1))
	req.ProducerID, req.ProducerEpoch = int64(a.int("producer", 0)), int16(a.int("epoch", 0))
	if a.has("member") {
		req.MemberID = s.member(a.str("member"))
		if a.strOr("gen", "") == "current" {
			req.Generation = s.epochs[req.Group+"/"+a.str("member")]
		}
	}
	req.InstanceID = a.opt("instance")
	byTopic := map[string]int{}
	for _, spec := range a.list("offsets") {
		tp, off, _ := strings.Cut(spec, "=")
		topic, ps, _ := strings.Cut(tp, ":")
		p, _ := strconv.Atoi(ps)
		o, _ := strconv.ParseInt(off, 10, 64)
		i, ok := byTopic[topic]
		if !ok {
			i = len(req.Topics)
			byTopic[topic] = i
			req.Topics = append(req.Topics, kmsg.TxnOffsetCommitRequestTopic{Topic: topic})
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: int32(p), Offset: o, LeaderEpoch: -1, Metadata: a.opt("metadata")})
	}
	r := DoMeta(s.h, meta(req.Version, a), coordinator.TxnOffsetCommit(req)).Resp
	b.WriteString("txn-commit:")
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(b, " %s:%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
		}
	}
	b.WriteString("\n")
}

func (s *script) fetch(b *strings.Builder, a args) {
	fg := coordinator.FetchGroup{Group: a.str("group"), MemberEpoch: int32(a.int("epoch", -1)), RequireStable: a.strOr("stable", "") == "true"}
	if a.has("member") {
		// A v9 fetch bound to a member (member id and epoch).
		m := s.member(a.str("member"))
		fg.MemberID = &m
	}
	if a.has("topics") {
		fg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, tp := range a.partitions("topics") {
			fg.Topics = append(fg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: tp.topic, Partitions: tp.parts})
		}
	}
	g := Do(s.h, coordinator.FetchOffsets(fg)).Resp
	fmt.Fprintf(b, "fetch %s: %s", g.Group, errName(g.ErrorCode))
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				fmt.Fprintf(b, " %s:%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
				continue
			}
			fmt.Fprintf(b, " %s:%d=%d", t.Topic, p.Partition, p.Offset)
		}
	}
	b.WriteString("\n")
}

// record renders a coordinator record on one line.
func (s *script) record(r coordinator.Record) string {
	typ, _ := coordinator.RecordType(r.Key)
	name := recordNames[typ]
	if name == "" {
		name = fmt.Sprintf("type-%d", typ)
	}
	switch typ {
	case coordinator.RecRebalanceHistory:
		g, seq, e, _ := coordinator.DecodeRebalanceHistory(r)
		if e == nil {
			return fmt.Sprintf("%s %s#%d tombstone", name, g, seq)
		}
		return fmt.Sprintf("%s %s#%d %s", name, g, seq, s.event(*e))
	case 0, coordinator.RecOffsetCommit:
		var k kmsg.OffsetCommitKey
		_ = k.ReadFrom(r.Key)
		if r.Value == nil {
			return fmt.Sprintf("%s %s/%s/%d tombstone", name, k.Group, k.Topic, k.Partition)
		}
		var v kmsg.OffsetCommitValue
		_ = v.ReadFrom(r.Value)
		return fmt.Sprintf("%s %s/%s/%d offset=%d", name, k.Group, k.Topic, k.Partition, v.Offset)
	case coordinator.RecGroupMetadata:
		var k kmsg.GroupMetadataKey
		_ = k.ReadFrom(r.Key)
		if r.Value == nil {
			return fmt.Sprintf("%s %s tombstone", name, k.Group)
		}
		var v kmsg.GroupMetadataValue
		_ = v.ReadFrom(r.Value)
		var ms []string
		for _, m := range v.Members {
			ms = append(ms, s.name(m.MemberID))
		}
		leader := "-"
		if v.Leader != nil {
			leader = s.name(*v.Leader)
		}
		return fmt.Sprintf("%s %s gen=%d protocol=%s leader=%s members=[%s]", name, k.Group, v.Generation, str(v.Protocol), leader, strings.Join(ms, " "))
	}
	if line, ok := s.shareRecord(typ, name, r); ok {
		return line
	}
	if typ == coordinator.RecPendingTxnOffset {
		d := coordinator.Dec{B: r.Key[2:]}
		g, pid, t, p := d.String(), d.Int64(), d.String(), d.Int32()
		out := fmt.Sprintf("%s %s/%d/%s/%d", name, g, pid, t, p)
		if r.Value == nil {
			return out + " tombstone"
		}
		v := coordinator.Dec{B: r.Value}
		v.Int16()
		off, _, _, _, epoch, seq, sup := v.Int64(), v.Int32(), v.String(), v.Int64(), v.Int16(), v.Int64(), v.Bool()
		out += fmt.Sprintf(" offset=%d epoch=%d seq=%d", off, epoch, seq)
		if sup {
			out += " superseded"
		}
		return out
	}
	d := coordinator.Dec{B: r.Key[2:]}
	key := []string{d.String()}
	for len(d.B) > 0 && d.Err() == nil {
		key = append(key, d.String())
	}
	for i := 1; i < len(key); i++ {
		key[i] = s.name(key[i])
	}
	out := name + " " + strings.Join(key, "/")
	if r.Value == nil {
		return out + " tombstone"
	}
	v := coordinator.Dec{B: r.Value}
	v.Int16()
	switch typ {
	case coordinator.RecConsumerGroupMetadata, coordinator.RecConsumerGroupTargetMetadata,
		coordinator.RecStreamsGroupMetadata, coordinator.RecStreamsGroupTargetMetadata:
		out += fmt.Sprintf(" epoch=%d", v.Int32())
	case coordinator.RecConsumerGroupCurrentMember, coordinator.RecStreamsGroupCurrentMember:
		epoch, prev, state := v.Int32(), v.Int32(), v.Int8()
		out += fmt.Sprintf(" epoch=%d previous=%d state=%d", epoch, prev, state)
	}
	return out
}

// event renders a rebalance history event: "consumer epoch 1→2 MEMBER_JOINED member=m1; ...".
func (s *script) event(e coordinator.RebalanceEvent) string {
	var cs []string
	for _, c := range e.Causes {
		c.Member = s.name(c.Member)
		cs = append(cs, c.String())
	}
	return fmt.Sprintf("%s epoch %d→%d %s", e.GroupType, e.OldEpoch, e.NewEpoch, strings.Join(cs, "; "))
}

var recordNames = map[int16]string{
	coordinator.RecRebalanceHistory:      "RebalanceHistory",
	0:                                    "OffsetCommit",
	coordinator.RecOffsetCommit:          "OffsetCommit",
	coordinator.RecGroupMetadata:         "GroupMetadata",
	coordinator.RecConsumerGroupMetadata: "ConsumerGroupMetadata",
	coordinator.RecConsumerGroupMemberMetadata: "ConsumerGroupMemberMetadata",
	coordinator.RecConsumerGroupTargetMetadata: "ConsumerGroupTargetAssignmentMetadata",
	coordinator.RecConsumerGroupTargetMember:   "ConsumerGroupTargetAssignmentMember",
	coordinator.RecConsumerGroupCurrentMember:  "ConsumerGroupCurrentMemberAssignment",
	coordinator.RecConsumerGroupRegex:          "ConsumerGroupRegularExpression",
	coordinator.RecStreamsGroupMetadata:        "StreamsGroupMetadata",
	coordinator.RecStreamsGroupMemberMetadata:  "StreamsGroupMemberMetadata",
	coordinator.RecStreamsGroupTargetMetadata:  "StreamsGroupTargetAssignmentMetadata",
	coordinator.RecStreamsGroupTargetMember:    "StreamsGroupTargetAssignmentMember",
	coordinator.RecStreamsGroupCurrentMember:   "StreamsGroupCurrentMemberAssignment",
	coordinator.RecStreamsGroupTopology:        "StreamsGroupTopology",
	coordinator.RecPendingTxnOffset:            "PendingTxnOffset",
	coordinator.RecShareGroupMemberMetadata:    "ShareGroupMemberMetadata",
	coordinator.RecShareGroupMetadata:          "ShareGroupMetadata",
	coordinator.RecShareGroupTargetMetadata:    "ShareGroupTargetAssignmentMetadata",
	coordinator.RecShareGroupTargetMember:      "ShareGroupTargetAssignmentMember",
	coordinator.RecShareGroupCurrentMember:     "ShareGroupCurrentMemberAssignment",
	coordinator.RecSharePartitionState:         "SharePartitionState",
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return fmt.Sprintf("error-%d", code)
}

func errOf(err error) string { return errName(coordinator.ErrorCode(err)) }

func str(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func ints(ps []int32) string {
	ps = append([]int32(nil), ps...)
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.Itoa(int(p))
	}
	return strings.Join(out, ",")
}

// args reads a command's key=value arguments.
type args struct {
	d *datadriven.TestData
	t *testing.T
}

func (a args) has(k string) bool { return a.d.HasArg(k) }

func (a args) str(k string) string {
	if !a.d.HasArg(k) {
		a.d.Fatalf(a.t, "%s: missing %s=", a.d.Cmd, k)
	}
	var v string
	a.d.ScanArgs(a.t, k, &v)
	return v
}

func (a args) strOr(k, def string) string {
	if !a.d.HasArg(k) {
		return def
	}
	return a.str(k)
}

func (a args) opt(k string) *string {
	if !a.d.HasArg(k) {
		return nil
	}
	v := a.str(k)
	return &v
}

func (a args) int(k string, def int) int {
	if !a.d.HasArg(k) || a.str(k) == "current" {
		return def
	}
	n, err := strconv.Atoi(a.str(k))
	if err != nil {
		a.d.Fatalf(a.t, "%s=%s: %v", k, a.str(k), err)
	}
	return n
}

func (a args) dur(k string, def time.Duration) time.Duration {
	if !a.d.HasArg(k) {
		return def
	}
	d, err := time.ParseDuration(a.str(k))
	if err != nil {
		a.d.Fatalf(a.t, "%s: %v", k, err)
	}
	return d
}

func (a args) list(k string) []string {
	for _, arg := range a.d.CmdArgs {
		if arg.Key == k {
			var out []string
			for _, v := range arg.Vals {
				out = append(out, strings.Split(v, ",")...)
			}
			return out
		}
	}
	return nil
}

func (a args) listOr(k string, def []string) []string {
	if !a.d.HasArg(k) {
		return def
	}
	return a.list(k)
}

type topicParts struct {
	topic string
	parts []int32
}

// partitions reads t:0,1;u:2 (or t:0,t:1 — a bare number continues the previous topic).
func (a args) partitions(k string) []topicParts {
	var out []topicParts
	for _, item := range a.list(k) {
		for _, tp := range strings.Split(item, ";") {
			topic, p, ok := strings.Cut(tp, ":")
			if !ok && len(out) > 0 {
				topic, p = out[len(out)-1].topic, tp
			}
			n, err := strconv.Atoi(p)
			if err != nil {
				a.d.Fatalf(a.t, "%s: bad partition %q", k, tp)
			}
			if len(out) > 0 && out[len(out)-1].topic == topic {
				out[len(out)-1].parts = append(out[len(out)-1].parts, int32(n))
			} else {
				out = append(out, topicParts{topic, []int32{int32(n)}})
			}
		}
	}
	return out
}
