// Package topology models a Kafka Streams topology description as carried by
// KIP-1331 (StreamsGroupTopologyDescriptionUpdate, API key 93, and
// StreamsGroupDescribe v1 TopologyDescription), independent of any server.
//
// The model mirrors Kafka's StreamsGroupTopologyDescription: subtopologies of
// nodes (Source, Processor, Sink) linked by successor edges, plus global
// stores (one Source feeding one Processor). Predecessor edges are never
// stored; they are derived by inverting successors (KIP-1331 "Topology
// Translation").
package topology

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error that reports a malformed description
// (unknown node type, dangling successor, duplicate node, ...). KIP-1331 maps
// it to INVALID_REQUEST, a permanent push failure.
var ErrInvalid = errors.New("invalid topology description")

// NodeType is the wire NodeType (int8) of a topology node.
type NodeType int8

// Node types as numbered on the wire (KIP-1331 schema).
const (
	NodeTypeSource    NodeType = 1
	NodeTypeProcessor NodeType = 2
	NodeTypeSink      NodeType = 3
)

// String returns "SOURCE", "PROCESSOR", "SINK" or "UNKNOWN(n)".
func (t NodeType) String() string {
	switch t {
	case NodeTypeSource:
		return "SOURCE"
	case NodeTypeProcessor:
		return "PROCESSOR"
	case NodeTypeSink:
		return "SINK"
	}
	return fmt.Sprintf("UNKNOWN(%d)", int8(t))
}

// Valid reports whether t is one of the three known node types.
func (t NodeType) Valid() bool {
	return t == NodeTypeSource || t == NodeTypeProcessor || t == NodeTypeSink
}

// Description is a whole topology description: the subtopologies (which
// generate tasks) and the global stores (which do not).
type Description struct {
	Subtopologies []Subtopology
	GlobalStores  []GlobalStore
}

// Subtopology is one sub-topology: its id (a decimal string for Kafka
// Streams, e.g. "0") and its nodes.
type Subtopology struct {
	ID    string
	Nodes []Node
}

// Node is one processing node. Which fields are meaningful depends on Type:
// Source uses SourceTopics; Processor uses Stores; Sink uses SinkTopic (nil
// when the sink chooses its topic dynamically through a TopicNameExtractor).
// Successors name other nodes of the same subtopology; sinks have none.
type Node struct {
	Name         string
	Type         NodeType
	SourceTopics []string
	SinkTopic    *string
	Stores       []string
	Successors   []string
}

// GlobalStore is a global state store: a Source reading the global topic and
// the Processor that maintains the store.
type GlobalStore struct {
	Source    Node
	Processor Node
}

// Clone returns a deep copy of d; empty slices become nil.
func (d *Description) Clone() *Description {
	if d == nil {
		return nil
	}
	c := &Description{}
	if len(d.Subtopologies) > 0 {
		c.Subtopologies = make([]Subtopology, len(d.Subtopologies))
		for i, s := range d.Subtopologies {
			c.Subtopologies[i] = s.clone()
		}
	}
	if len(d.GlobalStores) > 0 {
		c.GlobalStores = make([]GlobalStore, len(d.GlobalStores))
		for i, g := range d.GlobalStores {
			c.GlobalStores[i] = GlobalStore{Source: g.Source.clone(), Processor: g.Processor.clone()}
		}
	}
	return c
}

func (s Subtopology) clone() Subtopology {
	c := Subtopology{ID: s.ID}
	if len(s.Nodes) > 0 {
		c.Nodes = make([]Node, len(s.Nodes))
		for i, n := range s.Nodes {
			c.Nodes[i] = n.clone()
		}
	}
	return c
}

func (n Node) clone() Node {
	c := Node{
		Name:         n.Name,
		Type:         n.Type,
		SourceTopics: cloneStrings(n.SourceTopics),
		Stores:       cloneStrings(n.Stores),
		Successors:   cloneStrings(n.Successors),
	}
	if n.SinkTopic != nil {
		t := *n.SinkTopic
		c.SinkTopic = &t
	}
	return c
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// Equal reports whether d and o are the same description: same
// subtopologies, nodes and global stores in the same order. Nil and empty
// slices are equal.
func (d *Description) Equal(o *Description) bool {
	if d == nil || o == nil {
		return d == o
	}
	if len(d.Subtopologies) != len(o.Subtopologies) || len(d.GlobalStores) != len(o.GlobalStores) {
		return false
	}
	for i := range d.Subtopologies {
		a, b := d.Subtopologies[i], o.Subtopologies[i]
		if a.ID != b.ID || len(a.Nodes) != len(b.Nodes) {
			return false
		}
		for j := range a.Nodes {
			if !a.Nodes[j].equal(b.Nodes[j]) {
				return false
			}
		}
	}
	for i := range d.GlobalStores {
		a, b := d.GlobalStores[i], o.GlobalStores[i]
		if !a.Source.equal(b.Source) || !a.Processor.equal(b.Processor) {
			return false
		}
	}
	return true
}

func (n Node) equal(o Node) bool {
	if n.Name != o.Name || n.Type != o.Type {
		return false
	}
	if (n.SinkTopic == nil) != (o.SinkTopic == nil) || (n.SinkTopic != nil && *n.SinkTopic != *o.SinkTopic) {
		return false
	}
	return equalStrings(n.SourceTopics, o.SourceTopics) && equalStrings(n.Stores, o.Stores) &&
		equalStrings(n.Successors, o.Successors)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
