package member

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TaskID names one task: a subtopology and a partition of its input topics.
type TaskID struct {
	Subtopology string
	Partition   int32
}

// String renders the task as Kafka Streams does: "<subtopology>_<partition>".
func (t TaskID) String() string { return t.Subtopology + "_" + strconv.Itoa(int(t.Partition)) }

func compareTask(a, b TaskID) int {
	if c := cmp.Compare(a.Subtopology, b.Subtopology); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// TaskSet is a sorted (by subtopology, then partition), duplicate-free list
// of tasks. The zero value is the empty set. Build one with NewTaskSet.
type TaskSet []TaskID

// NewTaskSet returns the sorted, deduplicated set of ids.
func NewTaskSet(ids ...TaskID) TaskSet {
	if len(ids) == 0 {
		return nil
	}
	s := slices.Clone(ids)
	slices.SortFunc(s, compareTask)
	return TaskSet(slices.Compact(s))
}

// Len is the number of tasks.
func (s TaskSet) Len() int { return len(s) }

// Contains reports whether id is in s.
func (s TaskSet) Contains(id TaskID) bool {
	_, ok := slices.BinarySearchFunc(s, id, compareTask)
	return ok
}

// Minus returns the tasks of s that are not in o (a linear merge of the
// two sorted sets).
func (s TaskSet) Minus(o TaskSet) TaskSet {
	var out TaskSet
	j := 0
	for _, t := range s {
		for j < len(o) && compareTask(o[j], t) < 0 {
			j++
		}
		if j < len(o) && compareTask(o[j], t) == 0 {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Union returns the tasks in s or o (a linear merge of the two sorted
// sets).
func (s TaskSet) Union(o TaskSet) TaskSet {
	if len(s)+len(o) == 0 {
		return nil
	}
	out := make(TaskSet, 0, len(s)+len(o))
	i, j := 0, 0
	for i < len(s) || j < len(o) {
		switch {
		case j == len(o) || (i < len(s) && compareTask(s[i], o[j]) < 0):
			out = append(out, s[i])
			i++
		case i == len(s) || compareTask(s[i], o[j]) > 0:
			out = append(out, o[j])
			j++
		default:
			out = append(out, s[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// Equal reports whether s and o hold the same tasks.
func (s TaskSet) Equal(o TaskSet) bool { return slices.Equal(s, o) }

// String renders the set like Kafka's tools: "0:[0,1] 1:[2]".
func (s TaskSet) String() string {
	var b strings.Builder
	for i, t := range s {
		if i == 0 || s[i-1].Subtopology != t.Subtopology {
			if i > 0 {
				b.WriteString("] ")
			}
			b.WriteString(t.Subtopology)
			b.WriteString(":[")
		} else {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(t.Partition)))
	}
	if len(s) > 0 {
		b.WriteByte(']')
	}
	return b.String()
}

// toWire groups the set by subtopology in the wire form; never nil (an
// empty, non-null list), as the request requires all three task lists to be
// non-null together.
func (s TaskSet) toWire() []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	for i, t := range s {
		if i == 0 || s[i-1].Subtopology != t.Subtopology {
			w := kmsg.NewTaskIDs()
			w.SubtopologyID = t.Subtopology
			out = append(out, w)
		}
		last := &out[len(out)-1]
		last.Partitions = append(last.Partitions, t.Partition)
	}
	return out
}

// taskSetFromWire converts a wire task list.
func taskSetFromWire(w []kmsg.TaskIDs) TaskSet {
	var ids []TaskID
	for _, t := range w {
		for _, p := range t.Partitions {
			ids = append(ids, TaskID{Subtopology: t.SubtopologyID, Partition: p})
		}
	}
	return NewTaskSet(ids...)
}

// Assignment is the set of tasks of each kind a member owns.
type Assignment struct {
	Active  TaskSet
	Standby TaskSet
	Warmup  TaskSet
}

// Empty reports whether no task of any kind is owned.
func (a Assignment) Empty() bool {
	return len(a.Active) == 0 && len(a.Standby) == 0 && len(a.Warmup) == 0
}

// Equal reports whether a and o hold the same tasks of each kind.
func (a Assignment) Equal(o Assignment) bool {
	return a.Active.Equal(o.Active) && a.Standby.Equal(o.Standby) && a.Warmup.Equal(o.Warmup)
}

func (a Assignment) minus(o Assignment) Assignment {
	return Assignment{Active: a.Active.Minus(o.Active), Standby: a.Standby.Minus(o.Standby), Warmup: a.Warmup.Minus(o.Warmup)}
}

func (a Assignment) clone() Assignment {
	return Assignment{Active: slices.Clone(a.Active), Standby: slices.Clone(a.Standby), Warmup: slices.Clone(a.Warmup)}
}
