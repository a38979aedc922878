package assignor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// maxTotalTasks bounds the number of tasks (active plus standby) of one
// assignment, to keep index arithmetic in int32 and allocations sane.
const maxTotalTasks = 1 << 26

// candidate kinds, in rank order: holders of the task in the previous target
// (standby or warm-up) rank ahead of members that only report a lag for it.
const (
	kindStandby int8 = iota
	kindWarmup
	kindLag
)

// cand is a member holding state of a task other than its previous active owner.
type cand struct {
	member int32
	kind   int8
	hasLag bool
	lag    int64
}

// candLess ranks state holders: previous standby/warm-up holders first, then
// lag reporters; within a tier the lowest known lag first, then member order.
func candLess(a, b cand) bool {
	ta, tb := a.kind == kindLag, b.kind == kindLag
	if ta != tb {
		return !ta
	}
	la, lb := lagKey(a), lagKey(b)
	if la != lb {
		return la < lb
	}
	return a.member < b.member
}

func lagKey(c cand) int64 {
	if !c.hasLag {
		return math.MaxInt64
	}
	return c.lag
}

// state is the working state of one assignment, on integer indexes:
// members in MemberID order, processes in ProcessID order, tasks numbered
// subtopology by subtopology (subtopologies in ID order).
type state struct {
	spec *GroupSpec

	members     []*MemberSpec // by member index
	reportsLags []bool        // member reports TaskLags
	proc        []int32       // member -> process
	procStart   []int32       // process -> first index in procList; len numProcs+1
	procList    []int32       // members of each process, ascending, process by process
	numProcs    int

	subs      []Subtopology // sorted by ID
	subIndex  subTable
	subOffset []int32 // task index of partition 0 of each subtopology; len(subs)+1
	numTasks  int
	numSF     int // stateful tasks
	replicas  int // standby replicas

	prevActive []int32 // task -> previous active member, -1
	candStart  []int32 // task -> first candidate; len numTasks+1
	cands      []cand

	owner   []int32 // task -> active member
	warm    []int32 // task -> warm-up member, -1
	standby []int32 // task*replicas+i -> standby member, -1

	load       []int32 // member -> tasks counted by the current pass
	procLoad   []int64 // process -> sum of its members' load
	procCap    []int64 // process -> number of its members
	uniformCap bool    // all processes have the same number of members
	mh         memberHeaps
	q          quota

	scratch scratch
}

// procSize returns the number of members of process p.
func (st *state) procSize(p int32) int32 { return st.procStart[p+1] - st.procStart[p] }

// procMembers returns the members of process p, ascending.
func (st *state) procMembers(p int32) []int32 { return st.procList[st.procStart[p]:st.procStart[p+1]] }

// reset validates spec and indexes it into st, reusing st's arrays.
func (st *state) reset(spec *GroupSpec) error {
	if spec == nil {
		return errors.New("streams assignor: nil group spec")
	}
	if spec.NumStandbyReplicas < 0 {
		return fmt.Errorf("streams assignor: NumStandbyReplicas %d must be >= 0", spec.NumStandbyReplicas)
	}
	if spec.NumWarmupReplicas < 0 {
		return fmt.Errorf("streams assignor: NumWarmupReplicas %d must be >= 0", spec.NumWarmupReplicas)
	}
	if spec.AcceptableRecoveryLag < 0 {
		return fmt.Errorf("streams assignor: AcceptableRecoveryLag %d must be >= 0", spec.AcceptableRecoveryLag)
	}
	st.spec, st.replicas = spec, spec.NumStandbyReplicas
	st.numTasks, st.numSF, st.numProcs = 0, 0, 0
	st.q = quota{}
	st.standby = st.standby[:0]
	if err := st.indexSubtopologies(); err != nil {
		return err
	}
	if err := st.indexMembers(); err != nil {
		return err
	}
	if int64(st.numTasks)+int64(st.numSF)*int64(st.replicas) > maxTotalTasks {
		return fmt.Errorf("streams assignor: %d tasks with %d standby replicas exceed the limit of %d",
			st.numTasks, st.replicas, maxTotalTasks)
	}
	st.indexPrevious()
	return nil
}

func (st *state) indexSubtopologies() error {
	subs := append(st.subs[:0], st.spec.Subtopologies...)
	st.subs = subs
	slices.SortFunc(subs, func(a, b Subtopology) int { return strings.Compare(a.ID, b.ID) })
	st.subOffset = grow(st.subOffset, len(subs)+1)
	total := int64(0)
	for i, s := range subs {
		if s.ID == "" {
			return errors.New("streams assignor: empty subtopology id")
		}
		if i > 0 && subs[i-1].ID == s.ID {
			return fmt.Errorf("streams assignor: duplicate subtopology id %q", s.ID)
		}
		if s.NumTasks < 0 {
			return fmt.Errorf("streams assignor: subtopology %q has NumTasks %d, must be >= 0", s.ID, s.NumTasks)
		}
		st.subOffset[i] = int32(total)
		total += int64(s.NumTasks)
		if total > maxTotalTasks {
			return fmt.Errorf("streams assignor: more than %d tasks", maxTotalTasks)
		}
		if s.Stateful {
			st.numSF += int(s.NumTasks)
		}
	}
	st.subOffset[len(subs)] = int32(total)
	st.numTasks = int(total)
	st.subIndex.build(subs)
	return nil
}

func (st *state) indexMembers() error {
	n := len(st.spec.Members)
	sc := &st.scratch
	// Sort indexes, not pointers: cheaper while the GC is marking.
	byID := grow(sc.byID, n)
	sc.byID = byID
	for i := range byID {
		byID[i] = int32(i)
	}
	all := st.spec.Members
	sc.keys = sortByString(byID, func(i int32) string { return all[i].MemberID }, sc.keys)
	st.members = grow(st.members, n)
	for i, j := range byID {
		st.members[i] = &all[j]
	}
	for i, m := range st.members {
		if m.MemberID == "" {
			return errors.New("streams assignor: empty member id")
		}
		if i > 0 && st.members[i-1].MemberID == m.MemberID {
			return fmt.Errorf("streams assignor: duplicate member id %q", m.MemberID)
		}
	}
	// Processes in ProcessID order; a member without one is its own process.
	order := grow(sc.order, n)
	sc.order = order
	for i := range order {
		order[i] = int32(i)
	}
	pids := grow(sc.pids, n)
	sc.pids = pids
	for i, m := range st.members {
		pids[i] = m.ProcessID
		if pids[i] == "" {
			// Its own process; the NUL prefix keeps it apart from real ids.
			pids[i] = "\x00" + m.MemberID
		}
	}
	pid := func(m int32) string { return pids[m] }
	sc.keys = sortByString(order, pid, sc.keys)
	st.proc = grow(st.proc, n)
	st.reportsLags = grow(st.reportsLags, n)
	st.procStart = grow(st.procStart, n+1)[:0]
	st.procList = grow(st.procList, n)
	for i, m := range order {
		if i == 0 || pid(order[i-1]) != pid(m) {
			st.procStart = append(st.procStart, int32(i))
		}
		st.proc[m] = int32(len(st.procStart) - 1)
		st.procList[i] = m
		st.reportsLags[m] = st.members[m].TaskLags != nil
	}
	st.numProcs = len(st.procStart)
	st.procStart = append(st.procStart, int32(n))
	st.load = filled(st.load, n, 0)
	st.procLoad = filled(st.procLoad, st.numProcs, 0)
	st.procCap = grow(st.procCap, st.numProcs)
	st.uniformCap = true
	for p := range st.procCap {
		st.procCap[p] = int64(st.procSize(int32(p)))
		st.uniformCap = st.uniformCap && st.procCap[p] == st.procCap[0]
	}
	st.mh.init(st)
	return nil
}

// subRange returns the task index of partition 0 of subtopology sub and its
// number of tasks; ok is false for an unknown subtopology.
func (st *state) subRange(sub string) (off, n int32, ok bool) {
	s := st.subIndex.find(st.subs, sub)
	if s < 0 {
		return 0, 0, false
	}
	return st.subOffset[s], st.subs[s].NumTasks, true
}

// indexPrevious records the previous active owner of every task and the
// ranked holders of each stateful task's state (CSR layout).
func (st *state) indexPrevious() {
	T := st.numTasks
	st.prevActive = filled(st.prevActive, T, -1)
	st.owner = filled(st.owner, T, -1)
	st.warm = filled(st.warm, T, -1)
	for m, ms := range st.members {
		for i := range ms.Active {
			e := &ms.Active[i]
			if off, n, ok := st.subRange(e.Subtopology); ok {
				for _, p := range e.Partitions {
					// Should two members claim a task, the first in member order keeps it.
					if p >= 0 && p < n && st.prevActive[off+p] < 0 {
						st.prevActive[off+p] = int32(m)
					}
				}
			}
		}
	}

	// One pass over the members' standby, warm-up and lag entries collects
	// candidate records; a member's lag for a task it holds as standby or
	// warm-up goes onto that record. last[t] is the newest record of task t,
	// which dedups a member listing a task twice (its records are adjacent).
	last := filled(st.scratch.last, T, -1)
	st.scratch.last = last
	recs := st.scratch.recs[:0]
	for m, ms := range st.members {
		mi := int32(m)
		holders := func(ts []SubtopologyTasks, kind int8) {
			for i := range ts {
				if off, n, ok := st.subRange(ts[i].Subtopology); ok {
					for _, p := range ts[i].Partitions {
						if p < 0 || p >= n {
							continue
						}
						t := off + p
						if st.prevActive[t] == mi || (last[t] >= 0 && recs[last[t]].c.member == mi) {
							continue
						}
						last[t] = int32(len(recs))
						recs = append(recs, rec{t, cand{member: mi, kind: kind}})
					}
				}
			}
		}
		holders(ms.Standby, kindStandby)
		holders(ms.Warmup, kindWarmup)
		for i := range ms.TaskLags {
			tl := &ms.TaskLags[i]
			off, n, ok := st.subRange(tl.Subtopology)
			if p := tl.Partition; ok && p >= 0 && p < n {
				t, lag := off+p, max(tl.Lag, 0)
				if st.prevActive[t] != mi {
					if l := last[t]; l >= 0 && recs[l].c.member == mi {
						if c := &recs[l].c; !c.hasLag || lag < c.lag {
							c.hasLag, c.lag = true, lag
						}
					} else {
						last[t] = int32(len(recs))
						recs = append(recs, rec{t, cand{member: mi, kind: kindLag, hasLag: true, lag: lag}})
					}
				}
			}
		}
	}
	st.scratch.recs = recs
	// CSR layout by task.
	st.candStart = filled(st.candStart, T+1, 0)
	for _, r := range recs {
		st.candStart[r.t+1]++
	}
	for t := 0; t < T; t++ {
		st.candStart[t+1] += st.candStart[t]
	}
	st.cands = grow(st.cands, len(recs))
	fill := last // reuse: next free slot per task
	copy(fill, st.candStart[:T])
	for _, r := range recs {
		st.cands[fill[r.t]] = r.c
		fill[r.t]++
	}
	for t := 0; t < T; t++ {
		cs := st.cands[st.candStart[t]:st.candStart[t+1]]
		// Lists are short (about the number of replicas): insertion sort.
		for i := 1; i < len(cs); i++ {
			for j := i; j > 0 && candLess(cs[j], cs[j-1]); j-- {
				cs[j], cs[j-1] = cs[j-1], cs[j]
			}
		}
	}
}

// candidates returns the ranked state holders of task t.
func (st *state) candidates(t int32) []cand {
	return st.cands[st.candStart[t]:st.candStart[t+1]]
}

// add changes a member's load, keeping process loads and heaps in step.
func (st *state) add(m int32, delta int32) {
	st.load[m] += delta
	st.procLoad[st.proc[m]] += int64(delta)
	st.mh.fix(m)
}

func (st *state) run() error {
	if len(st.members) == 0 || st.numTasks == 0 {
		return nil
	}
	if err := st.assignActive(true); err != nil {
		return err
	}
	if err := st.assignActive(false); err != nil {
		return err
	}
	st.assignWarmups()
	if st.replicas > 0 && st.numSF > 0 {
		st.assignStandbys()
	}
	return nil
}
