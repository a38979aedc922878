package coordinator

import (
	"sort"

	"github.com/muster-io/muster/internal/metadata"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/assign"
	"github.com/muster-io/muster/internal/metahash"
)

// consumerAssignors returns group.consumer.assignors (first = default); "uniform,range" when
// none are configured.
func consumerAssignors(st *State) []string {
	if l := st.Cfg.Consumer.Assignors; len(l) > 0 {
		return l
	}
	return []string{assign.UniformName, assign.RangeName}
}

func consumerAssignorSupported(st *State, name string) bool {
	for _, a := range consumerAssignors(st) {
		if a == name {
			return true
		}
	}
	return false
}

// preferredAssignor is Kafka's computePreferredServerAssignor: the ServerAssignor most members
// ask for (ties broken by name), else the default (first configured) assignor.
func (g *ConsumerGroup) preferredAssignor(st *State) string {
	counts := map[string]int{}
	for _, m := range g.members {
		if m.serverAssignor != "" {
			counts[m.serverAssignor]++
		}
	}
	best, n := "", 0
	for _, name := range sortedKeys(counts) {
		if counts[name] > n {
			best, n = name, counts[name]
		}
	}
	if best == "" {
		return consumerAssignors(st)[0]
	}
	return best
}

// cgTopicMeta is the assign.TopicMetadata view of the data plane for one assignment.
type cgTopicMeta struct {
	parts map[[16]byte]int32
	rack  string
}

func (m *cgTopicMeta) Partitions(id assign.TopicID) int32 {
	if n, ok := m.parts[id]; ok {
		return n
	}
	return -1
}

func (m *cgTopicMeta) PartitionRacks(id assign.TopicID, _ int32) []string {
	if m.rack == "" {
		return nil
	}
	return []string{m.rack}
}

// rackFunc is the racks of a partition's replicas: muster keeps one replica on this broker.
func rackFunc(ts *metadata.Image) func(int32) []string {
	r := ts.Rack()
	if r == "" {
		return nil
	}
	racks := []string{r}
	return func(int32) []string { return racks }
}

// metadataHashNow is the group's KIP-1101 metadata hash as of now: the stored metadataHash when
// it was computed in this process at the current subscription version and no topic refresh is
// pending (topic creations, deletions and resizes set g.refresh; a loaded group starts with
// hashComputed false), else a fresh computeMetadataHash.
func (g *ConsumerGroup) metadataHashNow(st *State) int64 {
	if g.hashComputed && g.hasMetadata && !g.refresh && g.hashVersion == g.subsVersion {
		return g.metadataHash
	}
	h := g.computeMetadataHash(st)
	g.hashComputed, g.hashVersion = true, g.subsVersion
	return h
}

// computeMetadataHash is KIP-1101's group hash over the subscribed topics that exist.
func (g *ConsumerGroup) computeMetadataHash(st *State) int64 {
	ts := st.Image
	if ts == nil {
		return 0
	}
	hashes := map[string]int64{}
	rack := ts.Rack()
	racks := rackFunc(ts)
	subs := g.subscribedTopics()
	for name := range subs {
		id, n, ok := ts.TopicID(name)
		if !ok {
			continue
		}
		// A topic hash is O(partitions): cache it while its inputs are unchanged.
		c, ok := g.topicHashes[name]
		if !ok || c.id != id || c.parts != n || c.rack != rack {
			c = cgTopicHash{id: id, parts: n, rack: rack, hash: metahash.TopicHash(id, name, n, racks)}
			initMap(&g.topicHashes)[name] = c
		}
		hashes[name] = c.hash
	}
	for name := range g.topicHashes {
		if !subs[name] {
			delete(g.topicHashes, name)
		}
	}
	return metahash.GroupHash(hashes)
}

// computeTargetAssignment runs the preferred assignor over the current members and writes the
// target assignment of every member whose target changed, then the target assignment metadata
// at epoch. An assignor failure is UNKNOWN_SERVER_ERROR, as in Kafka.
func (g *ConsumerGroup) computeTargetAssignment(st *State, epoch int32) error {
	name := g.preferredAssignor(st)
	a, ok := assign.ByName(name)
	if !ok {
		return Errf(kerr.UnknownServerError, "Failed to compute a new target assignment for epoch %d: unknown assignor %s.", epoch, name)
	}
	meta := &cgTopicMeta{parts: map[[16]byte]int32{}}
	ids := map[string][16]byte{}
	if ts := st.Image; ts != nil {
		meta.rack = ts.Rack()
		for name := range g.subscribedTopics() {
			if id, n, ok := ts.TopicID(name); ok {
				ids[name] = id
				meta.parts[id] = n
			}
		}
	}
	spec := &assign.GroupSpec{Members: make([]assign.MemberSpec, 0, len(g.members))}
	mids := sortedKeys(g.members)
	// Members usually share one subscription (a homogeneous group): a member whose subscribed
	// names and regex equal the previous member's reuses its resolved, sorted topic ids (read
	// only), so resolving costs O(topics) once instead of O(members × topics × log topics).
	var prev *consumerMember
	var prevSubscribed []assign.TopicID
	for _, mid := range mids {
		m := g.members[mid]
		ms := assign.MemberSpec{MemberID: mid, Current: g.targets[mid]}
		if m.instanceID != nil {
			ms.InstanceID = *m.instanceID
		}
		if m.rackID != nil {
			ms.RackID = *m.rackID
		}
		if prev != nil && m.subscribedRegex == prev.subscribedRegex && sameNames(m.subscribedNames, prev.subscribedNames) {
			ms.Subscribed = prevSubscribed
		} else {
			for _, t := range g.memberTopics(m) {
				if id, ok := ids[t]; ok {
					ms.Subscribed = append(ms.Subscribed, id)
				}
			}
			sort.Slice(ms.Subscribed, func(i, j int) bool { return string(ms.Subscribed[i][:]) < string(ms.Subscribed[j][:]) })
			prev, prevSubscribed = m, ms.Subscribed
		}
		spec.Members = append(spec.Members, ms)
	}
	out, err := a.Assign(spec, meta)
	if err != nil {
		return Errf(kerr.UnknownServerError, "Failed to compute a new target assignment for epoch %d: %v.", epoch, err)
	}
	for _, mid := range mids {
		next := assignedTP(out, mid)
		if old, ok := g.targets[mid]; ok && equalTP(old, next) {
			continue
		}
		g.writeTargetMember(st, mid, next)
	}
	g.writeTargetMeta(st, epoch)
	g.lastAssignment = st.Now
	return nil
}

// assignedTP copies member mid's partitions out of an assignor result (one
// allocation for all its partitions; already sorted and de-duplicated).
func assignedTP(out *assign.Assignment, mid string) topicPartitions {
	i := out.Index(mid)
	if i < 0 {
		return topicPartitions{}
	}
	tp := make(topicPartitions, out.Topics(i))
	parts := make([]int32, 0, out.Partitions(i))
	for k := range out.Topics(i) {
		id, ps := out.Topic(i, k)
		start := len(parts)
		parts = append(parts, ps...)
		tp[id] = parts[start:len(parts):len(parts)]
	}
	return tp
}

// assignmentDue reports whether a new target assignment may be computed now (Kafka 4.3,
// group.consumer.assignment.interval.ms, or the group's consumer.assignment.interval.ms): at
// most one per interval, so a join storm of N members
// costs O(N) heartbeats plus one assignment per interval rather than N assignments. The first
// assignment since load (or of a new group) is never delayed; a member heartbeating in between
// sees the group epoch ahead of the assignment epoch and keeps reconciling to the current target.
func (g *ConsumerGroup) assignmentDue(st *State) bool {
	if g.lastAssignment.IsZero() || g.assignmentEpoch == 0 {
		return true
	}
	return st.Now.Sub(g.lastAssignment) >= st.consumerConfig(g.id).AssignmentInterval
}
