package member

import "github.com/muster-io/muster/internal/streams/topology"

// TopologyDescription is the KIP-1331 topology description model
// (subtopologies of Source/Processor/Sink nodes linked by successors, plus
// global stores). It aliases muster's internal model so that programs
// outside this module can build one (NewTopologyBuilder) and pass it as
// Config.TopologyDescription.
type TopologyDescription = topology.Description

// TopologyBuilder assembles a TopologyDescription; see NewTopologyBuilder.
type TopologyBuilder = topology.Builder

// NewTopologyBuilder returns an empty builder:
//
//	desc, err := member.NewTopologyBuilder().
//		Subtopology("0").
//		Source("KSTREAM-SOURCE-0000000000", []string{"words"}, "KSTREAM-AGGREGATE-0000000001").
//		Processor("KSTREAM-AGGREGATE-0000000001", []string{"counts"}).
//		Done().
//		Build()
func NewTopologyBuilder() *TopologyBuilder { return topology.NewBuilder() }
