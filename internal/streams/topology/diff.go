package topology

import "sort"

// Diff is what changed from one description to another (a rolling topology upgrade): nodes,
// topics (sources and sinks) and state stores added and removed, each sorted. Nodes are named
// "subtopology/name" (global stores' nodes "global/name").
type Diff struct {
	AddedNodes    []string `json:"added_nodes"`
	RemovedNodes  []string `json:"removed_nodes"`
	AddedTopics   []string `json:"added_topics"`
	RemovedTopics []string `json:"removed_topics"`
	AddedStores   []string `json:"added_stores"`
	RemovedStores []string `json:"removed_stores"`
}

// Empty reports whether nothing changed.
func (d *Diff) Empty() bool {
	return len(d.AddedNodes)+len(d.RemovedNodes)+len(d.AddedTopics)+len(d.RemovedTopics)+len(d.AddedStores)+len(d.RemovedStores) == 0
}

// Compare returns what changed from old to new (either may be nil).
func Compare(old, new *Description) Diff {
	on, ot, os := inventory(old)
	nn, nt, ns := inventory(new)
	var d Diff
	d.AddedNodes, d.RemovedNodes = setDiff(nn, on), setDiff(on, nn)
	d.AddedTopics, d.RemovedTopics = setDiff(nt, ot), setDiff(ot, nt)
	d.AddedStores, d.RemovedStores = setDiff(ns, os), setDiff(os, ns)
	return d
}

func inventory(d *Description) (nodes, topics, stores map[string]bool) {
	nodes, topics, stores = map[string]bool{}, map[string]bool{}, map[string]bool{}
	if d == nil {
		return
	}
	add := func(prefix string, n Node) {
		nodes[prefix+"/"+n.Name] = true
		for _, t := range n.SourceTopics {
			topics[t] = true
		}
		if n.SinkTopic != nil {
			topics[*n.SinkTopic] = true
		}
		for _, s := range n.Stores {
			stores[s] = true
		}
	}
	for _, s := range d.Subtopologies {
		for _, n := range s.Nodes {
			add(s.ID, n)
		}
	}
	for _, g := range d.GlobalStores {
		add("global", g.Source)
		add("global", g.Processor)
	}
	return
}

// setDiff is a − b, sorted (never nil).
func setDiff(a, b map[string]bool) []string {
	out := []string{}
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
