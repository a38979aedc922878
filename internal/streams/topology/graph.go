package topology

import (
	"math"
	"sort"
	"strconv"
)

// Subtopology returns the subtopology with the given id, or nil.
func (d *Description) Subtopology(id string) *Subtopology {
	if d == nil {
		return nil
	}
	for i := range d.Subtopologies {
		if d.Subtopologies[i].ID == id {
			return &d.Subtopologies[i]
		}
	}
	return nil
}

// Predecessors returns the names of the nodes of subtopology subtopologyID
// that list node as a successor, i.e. the inverted successor relation
// (KIP-1331: predecessors are not sent on the wire). The order is Kafka
// Streams' node order: larger sub-graph first, then name. It returns nil if
// the subtopology or node does not exist or has no predecessors.
func (d *Description) Predecessors(subtopologyID, node string) []string {
	s := d.Subtopology(subtopologyID)
	if s == nil {
		return nil
	}
	g := newGraph(s.Nodes)
	i, ok := g.index[node]
	if !ok {
		return nil
	}
	return g.names(g.preds[i])
}

// graph is the derived view of one node set: predecessors, Kafka's node
// "size" (nodes reachable counting every path, the node itself included)
// and name lookups.
type graph struct {
	nodes []Node
	index map[string]int
	preds [][]int
	succs [][]int
	size  []int64
}

func newGraph(nodes []Node) *graph {
	g := &graph{
		nodes: nodes,
		index: make(map[string]int, len(nodes)),
		preds: make([][]int, len(nodes)),
		succs: make([][]int, len(nodes)),
		size:  make([]int64, len(nodes)),
	}
	for i := range nodes {
		if _, dup := g.index[nodes[i].Name]; !dup {
			g.index[nodes[i].Name] = i
		}
	}
	for i := range nodes {
		seen := make(map[int]bool, len(nodes[i].Successors))
		for _, s := range nodes[i].Successors {
			j, ok := g.index[s]
			if !ok || j == i || seen[j] {
				continue
			}
			seen[j] = true
			g.succs[i] = append(g.succs[i], j)
			g.preds[j] = append(g.preds[j], i)
		}
	}
	// size(n) = 1 + sum of size(successor), saturating; computed with an
	// explicit stack and cycle guard (a node on a cycle counts once).
	const (
		todo = iota
		active
		done
	)
	state := make([]uint8, len(nodes))
	for root := range nodes {
		if state[root] == done {
			continue
		}
		stack := []int{root}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			if state[n] == todo {
				state[n] = active
				for _, s := range g.succs[n] {
					if state[s] == todo {
						stack = append(stack, s)
					}
				}
				continue
			}
			stack = stack[:len(stack)-1]
			if state[n] == done {
				continue
			}
			sz := int64(1)
			for _, s := range g.succs[n] {
				if state[s] == done {
					sz = satAdd(sz, g.size[s])
				}
			}
			g.size[n] = sz
			state[n] = done
		}
	}
	for i := range g.preds {
		g.sortNodes(g.preds[i])
		g.sortNodes(g.succs[i])
	}
	return g
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// less is Kafka Streams' NodeComparator: larger size first, then name.
func (g *graph) less(a, b int) bool {
	if g.size[a] != g.size[b] {
		return g.size[a] > g.size[b]
	}
	return g.nodes[a].Name < g.nodes[b].Name
}

func (g *graph) sortNodes(idx []int) {
	sort.SliceStable(idx, func(x, y int) bool { return g.less(idx[x], idx[y]) })
}

// ordered returns all node indexes in Kafka Streams' describe() order.
func (g *graph) ordered() []int {
	idx := make([]int, len(g.nodes))
	for i := range idx {
		idx[i] = i
	}
	g.sortNodes(idx)
	return idx
}

func (g *graph) names(idx []int) []string {
	if len(idx) == 0 {
		return nil
	}
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = g.nodes[j].Name
	}
	return out
}

// orderedSubtopologies returns subtopology indexes sorted as Kafka Streams
// prints them: numeric ids ascending first, then other ids by string.
func orderedSubtopologies(d *Description) []int {
	idx := make([]int, len(d.Subtopologies))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ia, oka := numericID(d.Subtopologies[idx[a]].ID)
		ib, okb := numericID(d.Subtopologies[idx[b]].ID)
		switch {
		case oka && okb:
			return ia < ib
		case oka != okb:
			return oka
		}
		return d.Subtopologies[idx[a]].ID < d.Subtopologies[idx[b]].ID
	})
	return idx
}

func numericID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n >= 0
}
