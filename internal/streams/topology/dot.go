package topology

import (
	"sort"
	"strconv"
	"strings"
)

// Dot renders d as a Graphviz digraph. Each subtopology and global store is a
// cluster labelled like Text's headers; sources are "invhouse", processors
// "box", sinks "house"; topics are shared "ellipse" nodes (so a repartition
// topic links the sink of one subtopology to the source of another) and
// stores are "cylinder" nodes attached to their processors by dashed,
// undirected edges. Output is deterministic: sections in Text order, nodes
// in Kafka's node order, topics and stores sorted by name.
func Dot(d *Description) string {
	var b strings.Builder
	b.WriteString("digraph topology {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n")
	topics := map[string]struct{}{}
	stores := map[string]struct{}{}
	var edges []string
	for ei, e := range entries(d) {
		prefix := strconv.Itoa(ei) + "/"
		var nodes []Node
		var order []int
		var label string
		if e.sub != nil {
			label = "Sub-topology: " + e.sub.ID
			nodes = e.sub.Nodes
			order = newGraph(nodes).ordered()
		} else {
			label = "Sub-topology: " + strconv.FormatInt(e.globalID, 10) + " for global store"
			src := e.global.Source
			src.Successors = []string{e.global.Processor.Name}
			nodes = []Node{src, e.global.Processor}
			order = []int{0, 1}
		}
		b.WriteString("  subgraph " + dotQuote("cluster_"+strconv.Itoa(ei)) + " {\n")
		b.WriteString("    label=" + dotQuote(label) + ";\n")
		for _, i := range order {
			n := &nodes[i]
			id := dotQuote(prefix + n.Name)
			b.WriteString("    " + id + " [label=" + dotQuote(n.Name) + ", shape=" + dotShape(n.Type) + "];\n")
			for _, t := range n.SourceTopics {
				topics[t] = struct{}{}
				edges = append(edges, dotQuote("topic:"+t)+" -> "+id+";")
			}
			for _, s := range n.Successors {
				edges = append(edges, id+" -> "+dotQuote(prefix+s)+";")
			}
			for _, s := range n.Stores {
				stores[s] = struct{}{}
				edges = append(edges, id+" -> "+dotQuote("store:"+s)+" [style=dashed, dir=none];")
			}
			if n.Type == NodeTypeSink && n.SinkTopic != nil {
				topics[*n.SinkTopic] = struct{}{}
				edges = append(edges, id+" -> "+dotQuote("topic:"+*n.SinkTopic)+";")
			}
		}
		b.WriteString("  }\n")
	}
	for _, t := range sortedKeys(topics) {
		b.WriteString("  " + dotQuote("topic:"+t) + " [label=" + dotQuote(t) + ", shape=ellipse];\n")
	}
	for _, s := range sortedKeys(stores) {
		b.WriteString("  " + dotQuote("store:"+s) + " [label=" + dotQuote(s) + ", shape=cylinder];\n")
	}
	for _, e := range edges {
		b.WriteString("  " + e + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func dotShape(t NodeType) string {
	switch t {
	case NodeTypeSource:
		return "invhouse"
	case NodeTypeSink:
		return "house"
	}
	return "box"
}

// dotQuote returns s as a Graphviz double-quoted ID.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
