package topology

// Builder assembles a Description for clients and tests. Only successor
// edges are given; predecessors are derived. Build validates the result.
//
//	d, err := topology.NewBuilder().
//		Subtopology("0").
//		Source("src", []string{"in"}, "proc").
//		Processor("proc", []string{"store"}, "sink").
//		Sink("sink", "out").
//		Done().
//		GlobalStore("gsrc", "global-topic", "gproc", "global-store").
//		Build()
type Builder struct {
	d Description
}

// SubtopologyBuilder adds nodes to one subtopology; Done returns to the
// Builder.
type SubtopologyBuilder struct {
	b   *Builder
	idx int
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// Subtopology starts a new subtopology with the given id.
func (b *Builder) Subtopology(id string) *SubtopologyBuilder {
	b.d.Subtopologies = append(b.d.Subtopologies, Subtopology{ID: id})
	return &SubtopologyBuilder{b: b, idx: len(b.d.Subtopologies) - 1}
}

// GlobalStore adds a global store: source sourceName reading topic, feeding
// processor processorName that maintains store.
func (b *Builder) GlobalStore(sourceName, topic, processorName, store string) *Builder {
	b.d.GlobalStores = append(b.d.GlobalStores, GlobalStore{
		Source:    Node{Name: sourceName, Type: NodeTypeSource, SourceTopics: []string{topic}, Successors: []string{processorName}},
		Processor: Node{Name: processorName, Type: NodeTypeProcessor, Stores: []string{store}},
	})
	return b
}

// Build validates and returns the description (a deep copy; the Builder
// can be reused). The error wraps ErrInvalid.
func (b *Builder) Build() (*Description, error) {
	d := b.d.Clone()
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

func (s *SubtopologyBuilder) add(n Node) *SubtopologyBuilder {
	st := &s.b.d.Subtopologies[s.idx]
	st.Nodes = append(st.Nodes, n)
	return s
}

// Source adds a source node reading topics.
func (s *SubtopologyBuilder) Source(name string, topics []string, successors ...string) *SubtopologyBuilder {
	return s.add(Node{Name: name, Type: NodeTypeSource, SourceTopics: cloneStrings(topics), Successors: cloneStrings(successors)})
}

// Processor adds a processor node connected to stores.
func (s *SubtopologyBuilder) Processor(name string, stores []string, successors ...string) *SubtopologyBuilder {
	return s.add(Node{Name: name, Type: NodeTypeProcessor, Stores: cloneStrings(stores), Successors: cloneStrings(successors)})
}

// Sink adds a sink node writing to topic.
func (s *SubtopologyBuilder) Sink(name, topic string) *SubtopologyBuilder {
	t := topic
	return s.add(Node{Name: name, Type: NodeTypeSink, SinkTopic: &t})
}

// DynamicSink adds a sink whose topic is chosen per record (no SinkTopic).
func (s *SubtopologyBuilder) DynamicSink(name string) *SubtopologyBuilder {
	return s.add(Node{Name: name, Type: NodeTypeSink})
}

// Done ends the subtopology.
func (s *SubtopologyBuilder) Done() *Builder { return s.b }
