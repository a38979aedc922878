package topology

import "fmt"

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Validate checks that d is a well-formed topology description and returns
// an error wrapping ErrInvalid otherwise. Rules (Kafka Streams topology
// invariants, KIP-1331 "malformed graph"):
//   - subtopology ids are non-empty and unique;
//   - node names are non-empty and unique within a subtopology;
//   - node types are SOURCE, PROCESSOR or SINK;
//   - a source has at least one non-empty topic, no stores and no sink topic,
//     and no node names a source as successor;
//   - a processor has no source topics and no sink topic;
//   - a sink has no successors, no source topics and no stores; its topic, if
//     set, is non-empty;
//   - successors name existing, distinct nodes of the same subtopology other
//     than the node itself, and the successor graph has no cycle;
//   - a global store is a SOURCE (with topics) whose only possible successor
//     is its PROCESSOR, and a PROCESSOR with at least one store and no
//     successors.
//
// A nil description is invalid.
func (d *Description) Validate() error {
	if d == nil {
		return invalidf("description is null")
	}
	ids := make(map[string]struct{}, len(d.Subtopologies))
	for i := range d.Subtopologies {
		s := &d.Subtopologies[i]
		if s.ID == "" {
			return invalidf("subtopology %d has an empty id", i)
		}
		if _, dup := ids[s.ID]; dup {
			return invalidf("duplicate subtopology id %q", s.ID)
		}
		ids[s.ID] = struct{}{}
		if err := validateSubtopology(s); err != nil {
			return err
		}
	}
	for i := range d.GlobalStores {
		if err := validateGlobalStore(i, &d.GlobalStores[i]); err != nil {
			return err
		}
	}
	return nil
}

func validateSubtopology(s *Subtopology) error {
	byName := make(map[string]*Node, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Name == "" {
			return invalidf("subtopology %s: node %d has an empty name", s.ID, i)
		}
		if _, dup := byName[n.Name]; dup {
			return invalidf("subtopology %s: duplicate node name %q", s.ID, n.Name)
		}
		byName[n.Name] = n
		if err := validateNodeFields(n); err != nil {
			return fmt.Errorf("subtopology %s: %w", s.ID, err)
		}
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		seen := make(map[string]struct{}, len(n.Successors))
		for _, succ := range n.Successors {
			if _, dup := seen[succ]; dup {
				return invalidf("subtopology %s: node %q lists successor %q twice", s.ID, n.Name, succ)
			}
			seen[succ] = struct{}{}
			if succ == n.Name {
				return invalidf("subtopology %s: node %q is its own successor", s.ID, n.Name)
			}
			target, ok := byName[succ]
			if !ok {
				return invalidf("subtopology %s: node %q names unknown successor %q", s.ID, n.Name, succ)
			}
			if target.Type == NodeTypeSource {
				return invalidf("subtopology %s: node %q names source %q as successor", s.ID, n.Name, succ)
			}
		}
	}
	if cyc := findCycle(s); cyc != "" {
		return invalidf("subtopology %s: successor cycle through node %q", s.ID, cyc)
	}
	return nil
}

func validateNodeFields(n *Node) error {
	switch n.Type {
	case NodeTypeSource:
		if len(n.SourceTopics) == 0 {
			return invalidf("source %q has no topics", n.Name)
		}
		for _, t := range n.SourceTopics {
			if t == "" {
				return invalidf("source %q has an empty topic", n.Name)
			}
		}
		if len(n.Stores) > 0 || n.SinkTopic != nil {
			return invalidf("source %q carries stores or a sink topic", n.Name)
		}
	case NodeTypeProcessor:
		if len(n.SourceTopics) > 0 || n.SinkTopic != nil {
			return invalidf("processor %q carries source topics or a sink topic", n.Name)
		}
	case NodeTypeSink:
		if len(n.Successors) > 0 {
			return invalidf("sink %q has successors", n.Name)
		}
		if len(n.SourceTopics) > 0 || len(n.Stores) > 0 {
			return invalidf("sink %q carries source topics or stores", n.Name)
		}
		if n.SinkTopic != nil && *n.SinkTopic == "" {
			return invalidf("sink %q has an empty topic", n.Name)
		}
	default:
		return invalidf("node %q has unknown node type %d", n.Name, int8(n.Type))
	}
	for _, st := range n.Stores {
		if st == "" {
			return invalidf("node %q has an empty store name", n.Name)
		}
	}
	return nil
}

func validateGlobalStore(i int, g *GlobalStore) error {
	src, proc := &g.Source, &g.Processor
	if src.Type != NodeTypeSource {
		return invalidf("global store %d: source node %q has type %s, want SOURCE", i, src.Name, src.Type)
	}
	if proc.Type != NodeTypeProcessor {
		return invalidf("global store %d: processor node %q has type %s, want PROCESSOR", i, proc.Name, proc.Type)
	}
	if src.Name == "" || proc.Name == "" {
		return invalidf("global store %d: empty node name", i)
	}
	if src.Name == proc.Name {
		return invalidf("global store %d: source and processor share the name %q", i, src.Name)
	}
	if err := validateNodeFields(src); err != nil {
		return fmt.Errorf("global store %d: %w", i, err)
	}
	if err := validateNodeFields(proc); err != nil {
		return fmt.Errorf("global store %d: %w", i, err)
	}
	if len(proc.Stores) == 0 {
		return invalidf("global store %d: processor %q has no store", i, proc.Name)
	}
	if len(proc.Successors) > 0 {
		return invalidf("global store %d: processor %q has successors", i, proc.Name)
	}
	for _, s := range src.Successors {
		if s != proc.Name {
			return invalidf("global store %d: source %q names successor %q, want only %q", i, src.Name, s, proc.Name)
		}
	}
	if len(src.Successors) > 1 {
		return invalidf("global store %d: source %q lists its processor twice", i, src.Name)
	}
	return nil
}

// findCycle returns the name of a node on a successor cycle, or "" if the
// subtopology is acyclic. Successors must already be known to exist.
func findCycle(s *Subtopology) string {
	index := make(map[string]int, len(s.Nodes))
	for i := range s.Nodes {
		index[s.Nodes[i].Name] = i
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(s.Nodes))
	// Iterative DFS so that long chains cannot exhaust the stack.
	type frame struct{ node, next int }
	for root := range s.Nodes {
		if color[root] != white {
			continue
		}
		stack := []frame{{root, 0}}
		color[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			succ := s.Nodes[top.node].Successors
			if top.next == len(succ) {
				color[top.node] = black
				stack = stack[:len(stack)-1]
				continue
			}
			j, ok := index[succ[top.next]]
			top.next++
			if !ok {
				continue
			}
			switch color[j] {
			case grey:
				return s.Nodes[j].Name
			case white:
				color[j] = grey
				stack = append(stack, frame{j, 0})
			}
		}
	}
	return ""
}
