package topology

import "github.com/twmb/franz-go/pkg/kmsg"

// FromRequest converts the TopologyDescription of a
// StreamsGroupTopologyDescriptionUpdate request (API key 93) into a
// Description. Like Kafka's broker-side conversion it fails (wrapping
// ErrInvalid) only on an unknown node type; call Validate for the full graph
// checks.
func FromRequest(w *kmsg.TopologyDescription) (*Description, error) {
	if w == nil {
		return nil, invalidf("description is null")
	}
	return fromWire(w.Subtopologies, w.GlobalStores)
}

// FromDescribe converts the TopologyDescription of a StreamsGroupDescribe v1
// response group. A nil w (status other than AVAILABLE) gives (nil, nil).
func FromDescribe(w *kmsg.StreamsGroupDescribeResponseGroupTopologyDescription) (*Description, error) {
	if w == nil {
		return nil, nil
	}
	return fromWire(w.Subtopologies, w.GlobalStores)
}

// ToRequest converts d into the request-93 wire form.
func (d *Description) ToRequest() kmsg.TopologyDescription {
	w := kmsg.NewTopologyDescription()
	w.Subtopologies, w.GlobalStores = d.toWire()
	return w
}

// ToDescribe converts d into the StreamsGroupDescribe v1 wire form; nil for
// a nil d.
func (d *Description) ToDescribe() *kmsg.StreamsGroupDescribeResponseGroupTopologyDescription {
	if d == nil {
		return nil
	}
	w := kmsg.NewStreamsGroupDescribeResponseGroupTopologyDescription()
	w.Subtopologies, w.GlobalStores = d.toWire()
	return &w
}

func fromWire(subs []kmsg.TopologyDescriptionSubtopology, gss []kmsg.TopologyDescriptionGlobalStore) (*Description, error) {
	d := &Description{}
	if len(subs) > 0 {
		d.Subtopologies = make([]Subtopology, len(subs))
	}
	for i, ws := range subs {
		s := Subtopology{ID: ws.SubtopologyID}
		if len(ws.Nodes) > 0 {
			s.Nodes = make([]Node, len(ws.Nodes))
		}
		for j := range ws.Nodes {
			n, err := nodeFromWire(&ws.Nodes[j])
			if err != nil {
				return nil, err
			}
			s.Nodes[j] = n
		}
		d.Subtopologies[i] = s
	}
	if len(gss) > 0 {
		d.GlobalStores = make([]GlobalStore, len(gss))
	}
	for i := range gss {
		src, err := nodeFromWire(&gss[i].Source)
		if err != nil {
			return nil, err
		}
		proc, err := nodeFromWire(&gss[i].Processor)
		if err != nil {
			return nil, err
		}
		d.GlobalStores[i] = GlobalStore{Source: src, Processor: proc}
	}
	return d, nil
}

func nodeFromWire(w *kmsg.TopologyDescriptionNode) (Node, error) {
	t := NodeType(w.NodeType)
	if !t.Valid() {
		return Node{}, invalidf("node %q has unknown node type %d", w.Name, w.NodeType)
	}
	n := Node{
		Name:         w.Name,
		Type:         t,
		SourceTopics: cloneStrings(w.SourceTopics),
		Stores:       cloneStrings(w.Stores),
		Successors:   cloneStrings(w.Successors),
	}
	if w.SinkTopic != nil {
		s := *w.SinkTopic
		n.SinkTopic = &s
	}
	return n, nil
}

func (d *Description) toWire() ([]kmsg.TopologyDescriptionSubtopology, []kmsg.TopologyDescriptionGlobalStore) {
	if d == nil {
		return nil, nil
	}
	subs := make([]kmsg.TopologyDescriptionSubtopology, 0, len(d.Subtopologies))
	for _, s := range d.Subtopologies {
		ws := kmsg.NewTopologyDescriptionSubtopology()
		ws.SubtopologyID = s.ID
		ws.Nodes = make([]kmsg.TopologyDescriptionNode, 0, len(s.Nodes))
		for i := range s.Nodes {
			ws.Nodes = append(ws.Nodes, nodeToWire(&s.Nodes[i]))
		}
		subs = append(subs, ws)
	}
	gss := make([]kmsg.TopologyDescriptionGlobalStore, 0, len(d.GlobalStores))
	for i := range d.GlobalStores {
		wg := kmsg.NewTopologyDescriptionGlobalStore()
		wg.Source = nodeToWire(&d.GlobalStores[i].Source)
		wg.Processor = nodeToWire(&d.GlobalStores[i].Processor)
		gss = append(gss, wg)
	}
	return subs, gss
}

// nodeToWire always sends non-nil arrays: the schema's arrays are not
// nullable.
func nodeToWire(n *Node) kmsg.TopologyDescriptionNode {
	w := kmsg.NewTopologyDescriptionNode()
	w.Name = n.Name
	w.NodeType = int8(n.Type)
	w.SourceTopics = append([]string{}, n.SourceTopics...)
	w.Stores = append([]string{}, n.Stores...)
	w.Successors = append([]string{}, n.Successors...)
	if n.SinkTopic != nil {
		s := *n.SinkTopic
		w.SinkTopic = &s
	}
	return w
}
