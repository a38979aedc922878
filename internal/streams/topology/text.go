package topology

import (
	"strconv"
	"strings"
)

// Text renders d exactly as Kafka Streams' Topology#describe().toString()
// (InternalTopologyBuilder.TopologyDescription): a "Topologies:" header, then
// the subtopologies in ascending id with the global stores interleaved into
// the gaps of the id sequence (Kafka numbers subtopologies and global stores
// from one counter; the wire carries no global-store id, so a global store
// takes the first id not used by a subtopology). Within a subtopology nodes
// are in Kafka's order (larger sub-graph first, then name). A source prints
// its topics and "-->" successors, a processor its stores, "-->" successors
// and "<--" predecessors, a sink its topic and "<--" predecessors; an empty
// list prints "none". A sink without a topic (dynamic TopicNameExtractor,
// whose class the wire does not carry) prints "(extractor class: unknown)".
//
// Kafka's spacing quirks are kept: the first entry is indented three spaces,
// later ones two; a subtopology ends with a blank line, a global store does
// not.
func Text(d *Description) string {
	var b strings.Builder
	b.WriteString("Topologies:\n ")
	for _, e := range entries(d) {
		b.WriteString("  ")
		if e.sub != nil {
			writeSubtopology(&b, e.sub)
		} else {
			writeGlobalStore(&b, e.global, e.globalID)
		}
	}
	return b.String()
}

// entry is one printed section: a subtopology or a global store with the id
// Kafka would have given it.
type entry struct {
	sub      *Subtopology
	global   *GlobalStore
	globalID int64
}

// entries lists d's sections in Kafka Streams' print order (see Text).
func entries(d *Description) []entry {
	if d == nil {
		return nil
	}
	out := make([]entry, 0, len(d.Subtopologies)+len(d.GlobalStores))
	subs := orderedSubtopologies(d)
	expected := int64(0)
	si, gi := 0, 0
	for si < len(subs) && gi < len(d.GlobalStores) {
		s := &d.Subtopologies[subs[si]]
		if id, ok := numericID(s.ID); ok && id == expected {
			out = append(out, entry{sub: s})
			si++
		} else {
			out = append(out, entry{global: &d.GlobalStores[gi], globalID: expected})
			gi++
		}
		expected++
	}
	for ; si < len(subs); si++ {
		out = append(out, entry{sub: &d.Subtopologies[subs[si]]})
	}
	for ; gi < len(d.GlobalStores); gi++ {
		out = append(out, entry{global: &d.GlobalStores[gi], globalID: expected})
		expected++
	}
	return out
}

func writeSubtopology(b *strings.Builder, s *Subtopology) {
	b.WriteString("Sub-topology: ")
	b.WriteString(s.ID)
	b.WriteString("\n")
	g := newGraph(s.Nodes)
	for _, i := range g.ordered() {
		b.WriteString("    ")
		writeNode(b, &s.Nodes[i], s.Nodes[i].Successors, g.names(g.preds[i]))
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writeGlobalStore(b *strings.Builder, gs *GlobalStore, id int64) {
	b.WriteString("Sub-topology: ")
	b.WriteString(strconv.FormatInt(id, 10))
	b.WriteString(" for global store (will not generate tasks)\n    ")
	writeNode(b, &gs.Source, []string{gs.Processor.Name}, nil)
	b.WriteString("\n    ")
	writeNode(b, &gs.Processor, nil, []string{gs.Source.Name})
	b.WriteString("\n")
}

// writeNode prints one node. Successors are printed in wire order: a Kafka
// Streams client sends them in the order its own describe() prints them.
func writeNode(b *strings.Builder, n *Node, succ, pred []string) {
	switch n.Type {
	case NodeTypeSource:
		b.WriteString("Source: ")
		b.WriteString(n.Name)
		b.WriteString(" (topics: ")
		writeSet(b, n.SourceTopics)
		b.WriteString(")\n      --> ")
		writeNames(b, succ)
	case NodeTypeProcessor:
		b.WriteString("Processor: ")
		b.WriteString(n.Name)
		b.WriteString(" (stores: ")
		writeSet(b, n.Stores)
		b.WriteString(")\n      --> ")
		writeNames(b, succ)
		b.WriteString("\n      <-- ")
		writeNames(b, pred)
	case NodeTypeSink:
		b.WriteString("Sink: ")
		b.WriteString(n.Name)
		if n.SinkTopic != nil {
			b.WriteString(" (topic: ")
			b.WriteString(*n.SinkTopic)
		} else {
			b.WriteString(" (extractor class: unknown")
		}
		b.WriteString(")\n      <-- ")
		writeNames(b, pred)
	default:
		b.WriteString("Unknown: ")
		b.WriteString(n.Name)
		b.WriteString(" (type: ")
		b.WriteString(strconv.Itoa(int(n.Type)))
		b.WriteString(")")
	}
}

// writeSet prints a Java collection's toString: "[a, b]".
func writeSet(b *strings.Builder, s []string) {
	b.WriteString("[")
	b.WriteString(strings.Join(s, ", "))
	b.WriteString("]")
}

func writeNames(b *strings.Builder, names []string) {
	if len(names) == 0 {
		b.WriteString("none")
		return
	}
	b.WriteString(strings.Join(names, ", "))
}
