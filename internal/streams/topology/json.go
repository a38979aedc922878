package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jsonVersion is the "version" field of the canonical JSON form.
const jsonVersion = 1

// Canonical JSON form (stable, used by the disk and http plugins):
//
//	{"version":1,
//	 "subtopologies":[{"id":"0","nodes":[{"name":"src","type":"SOURCE",
//	   "sourceTopics":["in"],"sinkTopic":null,"stores":[],"successors":["p"]}]}],
//	 "globalStores":[{"source":{...node...},"processor":{...node...}}]}
//
// Field order is fixed, arrays are always present (never null) and keep
// the description's order; sinkTopic is null when unset. No maps are
// involved, so the bytes are identical across runs for equal descriptions.
type jsonDescription struct {
	Version       int               `json:"version"`
	Subtopologies []jsonSubtopology `json:"subtopologies"`
	GlobalStores  []jsonGlobalStore `json:"globalStores"`
}

type jsonSubtopology struct {
	ID    string     `json:"id"`
	Nodes []jsonNode `json:"nodes"`
}

type jsonNode struct {
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	SourceTopics []string `json:"sourceTopics"`
	SinkTopic    *string  `json:"sinkTopic"`
	Stores       []string `json:"stores"`
	Successors   []string `json:"successors"`
}

type jsonGlobalStore struct {
	Source    jsonNode `json:"source"`
	Processor jsonNode `json:"processor"`
}

// MarshalJSON returns the canonical JSON encoding of d (see package docs
// above jsonDescription). It never fails for a non-nil d; node types outside
// the known three are encoded as their number in a string, e.g. "7".
func (d *Description) MarshalJSON() ([]byte, error) {
	if d == nil {
		return []byte("null"), nil
	}
	jd := jsonDescription{
		Version:       jsonVersion,
		Subtopologies: make([]jsonSubtopology, 0, len(d.Subtopologies)),
		GlobalStores:  make([]jsonGlobalStore, 0, len(d.GlobalStores)),
	}
	for _, s := range d.Subtopologies {
		js := jsonSubtopology{ID: s.ID, Nodes: make([]jsonNode, 0, len(s.Nodes))}
		for i := range s.Nodes {
			js.Nodes = append(js.Nodes, nodeToJSON(&s.Nodes[i]))
		}
		jd.Subtopologies = append(jd.Subtopologies, js)
	}
	for i := range d.GlobalStores {
		jd.GlobalStores = append(jd.GlobalStores, jsonGlobalStore{
			Source:    nodeToJSON(&d.GlobalStores[i].Source),
			Processor: nodeToJSON(&d.GlobalStores[i].Processor),
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&jd); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Size returns the length in bytes of d's canonical JSON encoding, the
// quantity plugins compare with their size limit.
func (d *Description) Size() int {
	b, _ := d.MarshalJSON()
	return len(b)
}

// Unmarshal decodes the canonical JSON form into a new Description. It
// rejects malformed JSON, an unsupported version, unknown fields and unknown
// node types with an error; it does not run Validate. Empty arrays decode to
// nil slices.
func Unmarshal(data []byte) (*Description, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var jd jsonDescription
	if err := dec.Decode(&jd); err != nil {
		return nil, fmt.Errorf("decode topology description: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode topology description: trailing data")
	}
	if jd.Version != jsonVersion {
		return nil, fmt.Errorf("decode topology description: unsupported version %d", jd.Version)
	}
	d := &Description{}
	if len(jd.Subtopologies) > 0 {
		d.Subtopologies = make([]Subtopology, len(jd.Subtopologies))
	}
	for i, js := range jd.Subtopologies {
		s := Subtopology{ID: js.ID}
		if len(js.Nodes) > 0 {
			s.Nodes = make([]Node, len(js.Nodes))
		}
		for j := range js.Nodes {
			n, err := nodeFromJSON(&js.Nodes[j])
			if err != nil {
				return nil, err
			}
			s.Nodes[j] = n
		}
		d.Subtopologies[i] = s
	}
	if len(jd.GlobalStores) > 0 {
		d.GlobalStores = make([]GlobalStore, len(jd.GlobalStores))
	}
	for i := range jd.GlobalStores {
		src, err := nodeFromJSON(&jd.GlobalStores[i].Source)
		if err != nil {
			return nil, err
		}
		proc, err := nodeFromJSON(&jd.GlobalStores[i].Processor)
		if err != nil {
			return nil, err
		}
		d.GlobalStores[i] = GlobalStore{Source: src, Processor: proc}
	}
	return d, nil
}

func nodeToJSON(n *Node) jsonNode {
	t := n.Type.String()
	if !n.Type.Valid() {
		t = fmt.Sprint(int8(n.Type))
	}
	return jsonNode{
		Name:         n.Name,
		Type:         t,
		SourceTopics: nonNil(n.SourceTopics),
		SinkTopic:    n.SinkTopic,
		Stores:       nonNil(n.Stores),
		Successors:   nonNil(n.Successors),
	}
}

func nodeFromJSON(j *jsonNode) (Node, error) {
	var t NodeType
	switch j.Type {
	case "SOURCE":
		t = NodeTypeSource
	case "PROCESSOR":
		t = NodeTypeProcessor
	case "SINK":
		t = NodeTypeSink
	default:
		return Node{}, fmt.Errorf("decode topology description: %w: node %q has unknown type %q", ErrInvalid, j.Name, j.Type)
	}
	n := Node{
		Name:         j.Name,
		Type:         t,
		SourceTopics: cloneStrings(j.SourceTopics),
		Stores:       cloneStrings(j.Stores),
		Successors:   cloneStrings(j.Successors),
	}
	if j.SinkTopic != nil {
		s := *j.SinkTopic
		n.SinkTopic = &s
	}
	return n, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
