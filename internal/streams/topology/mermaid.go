package topology

import (
	"strconv"
	"strings"
)

// Mermaid renders d as a Mermaid flowchart ("flowchart TB"). Each subtopology
// and global store is a subgraph titled like Text's headers; node ids are
// generated (n<section>_<k>, t<k> for topics, s<k> for stores) so any node,
// topic or store name is safe; labels escape '"' as #quot;. Sources are
// stadium-shaped, processors rectangles, sinks subroutines, topics
// asymmetric flags and stores cylinders; store links are dotted. Output is
// deterministic (Text order; topics and stores sorted by name).
func Mermaid(d *Description) string {
	var b strings.Builder
	b.WriteString("flowchart TB\n")
	topics := map[string]struct{}{}
	stores := map[string]struct{}{}
	type edge struct{ from, to, kind, topic, store string }
	var edges []edge
	for ei, e := range entries(d) {
		var nodes []Node
		var order []int
		var title string
		if e.sub != nil {
			title = "Sub-topology: " + e.sub.ID
			nodes = e.sub.Nodes
			order = newGraph(nodes).ordered()
		} else {
			title = "Sub-topology: " + strconv.FormatInt(e.globalID, 10) + " for global store"
			src := e.global.Source
			src.Successors = []string{e.global.Processor.Name}
			nodes = []Node{src, e.global.Processor}
			order = []int{0, 1}
		}
		ids := make(map[string]string, len(nodes))
		for k, i := range order {
			ids[nodes[i].Name] = "n" + strconv.Itoa(ei) + "_" + strconv.Itoa(k)
		}
		b.WriteString("  subgraph sub" + strconv.Itoa(ei) + "[" + mermaidLabel(title) + "]\n")
		for _, i := range order {
			n := &nodes[i]
			id := ids[n.Name]
			b.WriteString("    " + id + mermaidShape(n.Type, mermaidLabel(n.Name)) + "\n")
			for _, t := range n.SourceTopics {
				topics[t] = struct{}{}
				edges = append(edges, edge{to: id, kind: "-->", topic: t})
			}
			for _, s := range n.Successors {
				if to, ok := ids[s]; ok {
					edges = append(edges, edge{from: id, to: to, kind: "-->"})
				}
			}
			for _, s := range n.Stores {
				stores[s] = struct{}{}
				edges = append(edges, edge{from: id, kind: "-.-", store: s})
			}
			if n.Type == NodeTypeSink && n.SinkTopic != nil {
				topics[*n.SinkTopic] = struct{}{}
				edges = append(edges, edge{from: id, kind: "-->", topic: *n.SinkTopic})
			}
		}
		b.WriteString("  end\n")
	}
	topicID := map[string]string{}
	for k, t := range sortedKeys(topics) {
		topicID[t] = "t" + strconv.Itoa(k)
		b.WriteString("  " + topicID[t] + ">" + mermaidLabel(t) + "]\n")
	}
	storeID := map[string]string{}
	for k, s := range sortedKeys(stores) {
		storeID[s] = "s" + strconv.Itoa(k)
		b.WriteString("  " + storeID[s] + "[(" + mermaidLabel(s) + ")]\n")
	}
	for _, e := range edges {
		from, to := e.from, e.to
		switch {
		case e.store != "":
			to = storeID[e.store]
		case e.topic != "" && from == "":
			from = topicID[e.topic]
		case e.topic != "":
			to = topicID[e.topic]
		}
		b.WriteString("  " + from + " " + e.kind + " " + to + "\n")
	}
	return b.String()
}

func mermaidShape(t NodeType, label string) string {
	switch t {
	case NodeTypeSource:
		return "([" + label + "])"
	case NodeTypeSink:
		return "[[" + label + "]]"
	}
	return "[" + label + "]"
}

// mermaidLabel quotes s for a Mermaid label.
func mermaidLabel(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "\n", " ", "\r", " ")
	return `"` + r.Replace(s) + `"`
}
