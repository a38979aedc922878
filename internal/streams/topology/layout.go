package topology

import (
	"sort"
	"strconv"
	"strings"
)

// Layout is a drawing of a description: each subtopology (and each global store) a column of
// layered nodes, edges between node boxes. Coordinates are abstract units (an SVG viewBox); the
// layout is a pure function of the description, so a page and a test see the same picture.
type Layout struct {
	Width, Height float64
	Groups        []LayoutGroup
	Nodes         []LayoutNode
	Edges         []LayoutEdge
}

// LayoutGroup is the box of one subtopology or global store.
type LayoutGroup struct {
	Title      string
	X, Y, W, H float64
}

// LayoutNode is one node's box and its label lines.
type LayoutNode struct {
	Name       string
	Type       NodeType
	Detail     string // topics of a source or sink, stores of a processor
	X, Y, W, H float64
}

// LayoutEdge is a successor edge from the bottom of one box to the top of another.
type LayoutEdge struct {
	From, To       string
	X1, Y1, X2, Y2 float64
}

// Layout dimensions.
const (
	layCharW    = 7.2 // average glyph width of the bold node names at the drawing's font size
	layNodeH    = 40
	layLayerGap = 36
	layNodeGap  = 16
	layPad      = 16
	layTitleH   = 24
	layGroupGap = 24
	layMinW     = 120
	layMaxChars = 44
)

// Layout lays out d: in each subtopology nodes are layered by their longest path from a source
// (sources on top, sinks below what feeds them) and ordered within a layer by the mean position
// of their predecessors (one downward barycenter sweep), which keeps edges short without a
// general graph-drawing library.
func (d *Description) Layout() *Layout {
	l := &Layout{}
	if d == nil {
		return l
	}
	x := float64(layPad)
	place := func(title string, nodes []Node) {
		g, w, h := layoutGroup(nodes, x+layPad, layPad+layTitleH+layPad)
		l.Groups = append(l.Groups, LayoutGroup{Title: title, X: x, Y: layPad, W: w + 2*layPad, H: h + layTitleH + 2*layPad})
		l.Nodes = append(l.Nodes, g.nodes...)
		l.Edges = append(l.Edges, g.edges...)
		x += w + 2*layPad + layGroupGap
		l.Height = max(l.Height, h+layTitleH+3*layPad)
	}
	for _, i := range orderedSubtopologies(d) {
		s := d.Subtopologies[i]
		place("Sub-topology: "+s.ID, s.Nodes)
	}
	for i, gs := range d.GlobalStores {
		src := gs.Source
		src.Successors = []string{gs.Processor.Name}
		place("Global store "+strconv.Itoa(i), []Node{src, gs.Processor})
	}
	l.Width = x - layGroupGap + layPad
	if len(l.Groups) == 0 {
		l.Width, l.Height = 2*layPad, 2*layPad
	}
	return l
}

type placed struct {
	nodes []LayoutNode
	edges []LayoutEdge
}

func layoutGroup(nodes []Node, x0, y0 float64) (placed, float64, float64) {
	g := newGraph(nodes)
	n := len(nodes)
	// Longest-path layering over the successor DAG (a cycle, which a valid description does
	// not have, is cut by visiting each node once).
	layer := make([]int, n)
	order := topoOrder(g)
	for _, i := range order {
		for _, s := range g.succs[i] {
			layer[s] = max(layer[s], layer[i]+1)
		}
	}
	layers := 0
	for _, lv := range layer {
		layers = max(layers, lv+1)
	}
	rows := make([][]int, layers)
	for _, i := range g.ordered() {
		rows[layer[i]] = append(rows[layer[i]], i)
	}
	widths := make([]float64, n)
	details := make([]string, n)
	for i, nd := range nodes {
		details[i] = detail(nd)
		chars := max(len(nd.Name), len(details[i]))
		widths[i] = max(layMinW, float64(min(chars, layMaxChars))*layCharW+20)
	}
	pos := make([]float64, n) // center x within the group
	var groupW float64
	for r, row := range rows {
		if r > 0 {
			bary := func(i int) float64 {
				if len(g.preds[i]) == 0 {
					return 1e18
				}
				s := 0.0
				for _, p := range g.preds[i] {
					s += pos[p]
				}
				return s / float64(len(g.preds[i]))
			}
			sort.SliceStable(row, func(a, b int) bool { return bary(row[a]) < bary(row[b]) })
		}
		cx := 0.0
		for _, i := range row {
			pos[i] = cx + widths[i]/2
			cx += widths[i] + layNodeGap
		}
		groupW = max(groupW, cx-layNodeGap)
	}
	// Center each row in the group's width.
	for _, row := range rows {
		if len(row) == 0 {
			continue
		}
		last := row[len(row)-1]
		rowW := pos[last] + widths[last]/2
		shift := (groupW - rowW) / 2
		for _, i := range row {
			pos[i] += shift
		}
	}
	var p placed
	for i, nd := range nodes {
		y := y0 + float64(layer[i])*(layNodeH+layLayerGap)
		p.nodes = append(p.nodes, LayoutNode{Name: nd.Name, Type: nd.Type, Detail: details[i],
			X: x0 + pos[i] - widths[i]/2, Y: y, W: widths[i], H: layNodeH})
	}
	for i := range nodes {
		for _, s := range g.succs[i] {
			a, b := p.nodes[i], p.nodes[s]
			p.edges = append(p.edges, LayoutEdge{From: a.Name, To: b.Name,
				X1: a.X + a.W/2, Y1: a.Y + a.H, X2: b.X + b.W/2, Y2: b.Y})
		}
	}
	h := float64(layers)*(layNodeH+layLayerGap) - layLayerGap
	if layers == 0 {
		h = 0
	}
	return p, max(groupW, layMinW), h
}

// topoOrder is a topological order of the graph (Kahn's algorithm in describe() order); nodes on
// a cycle come last in describe() order.
func topoOrder(g *graph) []int {
	n := len(g.nodes)
	in := make([]int, n)
	for i := range g.succs {
		for _, s := range g.succs[i] {
			in[s]++
		}
	}
	var out, queue []int
	for _, i := range g.ordered() {
		if in[i] == 0 {
			queue = append(queue, i)
		}
	}
	seen := make([]bool, n)
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		seen[i] = true
		out = append(out, i)
		for _, s := range g.succs[i] {
			if in[s]--; in[s] == 0 {
				queue = append(queue, s)
			}
		}
	}
	for _, i := range g.ordered() {
		if !seen[i] {
			out = append(out, i)
		}
	}
	return out
}

// detail is a node's second label line.
func detail(n Node) string {
	var s string
	switch n.Type {
	case NodeTypeSource:
		s = "topics: " + strings.Join(n.SourceTopics, ", ")
	case NodeTypeSink:
		if n.SinkTopic != nil {
			s = "topic: " + *n.SinkTopic
		} else {
			s = "topic: (extractor)"
		}
	default:
		if len(n.Stores) > 0 {
			s = "stores: " + strings.Join(n.Stores, ", ")
		}
	}
	if len(s) > layMaxChars {
		s = s[:layMaxChars-1] + "…"
	}
	return s
}
