package topology

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// wordCount is Kafka's WordCountDemo topology (docs "Streams tutorial"), with
// nodes deliberately listed out of Kafka's print order.
func wordCount(t testing.TB) *Description {
	t.Helper()
	d, err := NewBuilder().
		Subtopology("1").
		Sink("KSTREAM-SINK-0000000008", "streams-wordcount-output").
		Processor("KTABLE-TOSTREAM-0000000007", nil, "KSTREAM-SINK-0000000008").
		Processor("KSTREAM-AGGREGATE-0000000003", []string{"counts-store"}, "KTABLE-TOSTREAM-0000000007").
		Source("KSTREAM-SOURCE-0000000006", []string{"counts-store-repartition"}, "KSTREAM-AGGREGATE-0000000003").
		Done().
		Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"streams-plaintext-input"}, "KSTREAM-FLATMAPVALUES-0000000001").
		Processor("KSTREAM-FLATMAPVALUES-0000000001", nil, "KSTREAM-KEY-SELECT-0000000002").
		Processor("KSTREAM-KEY-SELECT-0000000002", nil, "KSTREAM-FILTER-0000000005").
		Processor("KSTREAM-FILTER-0000000005", nil, "KSTREAM-SINK-0000000004").
		Sink("KSTREAM-SINK-0000000004", "counts-store-repartition").
		Done().
		Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Expected output of Kafka Streams' Topology#describe() for the word count
// demo, as printed in Kafka's documentation.
const wordCountText = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])
      --> KSTREAM-FLATMAPVALUES-0000000001
    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
      --> KSTREAM-KEY-SELECT-0000000002
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])
      --> KSTREAM-FILTER-0000000005
      <-- KSTREAM-FLATMAPVALUES-0000000001
    Processor: KSTREAM-FILTER-0000000005 (stores: [])
      --> KSTREAM-SINK-0000000004
      <-- KSTREAM-KEY-SELECT-0000000002
    Sink: KSTREAM-SINK-0000000004 (topic: counts-store-repartition)
      <-- KSTREAM-FILTER-0000000005

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000006 (topics: [counts-store-repartition])
      --> KSTREAM-AGGREGATE-0000000003
    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts-store])
      --> KTABLE-TOSTREAM-0000000007
      <-- KSTREAM-SOURCE-0000000006
    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])
      --> KSTREAM-SINK-0000000008
      <-- KSTREAM-AGGREGATE-0000000003
    Sink: KSTREAM-SINK-0000000008 (topic: streams-wordcount-output)
      <-- KTABLE-TOSTREAM-0000000007

`

// fanOut has a source with several successors of different sub-graph sizes
// and a global store numbered between subtopologies 0 and 2 (shape of a
// real Kafka Streams application's describe() output).
func fanOut(t testing.TB) *Description {
	t.Helper()
	d, err := NewBuilder().
		Subtopology("2").
		Source("KSTREAM-SOURCE-0000000012", []string{"KSTREAM-TOTABLE-0000000009-repartition"}, "KSTREAM-TOTABLE-0000000009").
		Processor("KSTREAM-TOTABLE-0000000009", []string{"prices-table"}, "KTABLE-TOSTREAM-0000000013").
		Processor("KTABLE-TOSTREAM-0000000013", nil, "KSTREAM-SINK-0000000014").
		Sink("KSTREAM-SINK-0000000014", "prices").
		Done().
		Subtopology("0").
		Source("KSTREAM-SOURCE-0000000000", []string{"trades"},
			"KSTREAM-LEFTJOIN-0000000005", "KSTREAM-MAP-0000000008", "KSTREAM-MAPVALUES-0000000007", "KSTREAM-SINK-0000000001").
		Processor("KSTREAM-MAP-0000000008", nil, "KSTREAM-FILTER-0000000011").
		Processor("KSTREAM-FILTER-0000000011", nil, "KSTREAM-SINK-0000000010").
		Processor("KSTREAM-LEFTJOIN-0000000005", nil, "KSTREAM-SINK-0000000006").
		Processor("KSTREAM-MAPVALUES-0000000007", nil).
		DynamicSink("KSTREAM-SINK-0000000001").
		Sink("KSTREAM-SINK-0000000006", "trades.stream.opportunities").
		Sink("KSTREAM-SINK-0000000010", "KSTREAM-TOTABLE-0000000009-repartition").
		Done().
		GlobalStore("KSTREAM-SOURCE-0000000003", "positions", "KTABLE-SOURCE-0000000004", "positions-STATE-STORE-0000000002").
		Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const fanOutText = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [trades])
      --> KSTREAM-LEFTJOIN-0000000005, KSTREAM-MAP-0000000008, KSTREAM-MAPVALUES-0000000007, KSTREAM-SINK-0000000001
    Processor: KSTREAM-MAP-0000000008 (stores: [])
      --> KSTREAM-FILTER-0000000011
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-FILTER-0000000011 (stores: [])
      --> KSTREAM-SINK-0000000010
      <-- KSTREAM-MAP-0000000008
    Processor: KSTREAM-LEFTJOIN-0000000005 (stores: [])
      --> KSTREAM-SINK-0000000006
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-MAPVALUES-0000000007 (stores: [])
      --> none
      <-- KSTREAM-SOURCE-0000000000
    Sink: KSTREAM-SINK-0000000001 (extractor class: unknown)
      <-- KSTREAM-SOURCE-0000000000
    Sink: KSTREAM-SINK-0000000006 (topic: trades.stream.opportunities)
      <-- KSTREAM-LEFTJOIN-0000000005
    Sink: KSTREAM-SINK-0000000010 (topic: KSTREAM-TOTABLE-0000000009-repartition)
      <-- KSTREAM-FILTER-0000000011

  Sub-topology: 1 for global store (will not generate tasks)
    Source: KSTREAM-SOURCE-0000000003 (topics: [positions])
      --> KTABLE-SOURCE-0000000004
    Processor: KTABLE-SOURCE-0000000004 (stores: [positions-STATE-STORE-0000000002])
      --> none
      <-- KSTREAM-SOURCE-0000000003
  Sub-topology: 2
    Source: KSTREAM-SOURCE-0000000012 (topics: [KSTREAM-TOTABLE-0000000009-repartition])
      --> KSTREAM-TOTABLE-0000000009
    Processor: KSTREAM-TOTABLE-0000000009 (stores: [prices-table])
      --> KTABLE-TOSTREAM-0000000013
      <-- KSTREAM-SOURCE-0000000012
    Processor: KTABLE-TOSTREAM-0000000013 (stores: [])
      --> KSTREAM-SINK-0000000014
      <-- KSTREAM-TOTABLE-0000000009
    Sink: KSTREAM-SINK-0000000014 (topic: prices)
      <-- KTABLE-TOSTREAM-0000000013

`

func TestTextMatchesKafka(t *testing.T) {
	if got := Text(wordCount(t)); got != wordCountText {
		t.Errorf("word count:\n%s\nwant:\n%s", got, wordCountText)
	}
	if got := Text(fanOut(t)); got != fanOutText {
		t.Errorf("fan out:\n%s\nwant:\n%s", got, fanOutText)
	}
}

func TestTextGlobalOnlyAndEmpty(t *testing.T) {
	if got := Text(&Description{}); got != "Topologies:\n " {
		t.Errorf("empty: %q", got)
	}
	if got := Text(nil); got != "Topologies:\n " {
		t.Errorf("nil: %q", got)
	}
	d, err := NewBuilder().GlobalStore("src", "INPUT_TOPIC", "proc", "myStore").Build()
	if err != nil {
		t.Fatal(err)
	}
	want := "Topologies:\n" +
		"   Sub-topology: 0 for global store (will not generate tasks)\n" +
		"    Source: src (topics: [INPUT_TOPIC])\n" +
		"      --> proc\n" +
		"    Processor: proc (stores: [myStore])\n" +
		"      --> none\n" +
		"      <-- src\n"
	if got := Text(d); got != want {
		t.Errorf("global only:\n%q\nwant\n%q", got, want)
	}
	// Global stores after the last subtopology take the following ids.
	d, err = NewBuilder().Subtopology("0").Source("s", []string{"t"}).Done().
		GlobalStore("g1", "gt1", "gp1", "gs1").GlobalStore("g2", "gt2", "gp2", "gs2").Build()
	if err != nil {
		t.Fatal(err)
	}
	got := Text(d)
	for _, h := range []string{"   Sub-topology: 0\n", "  Sub-topology: 1 for global store", "  Sub-topology: 2 for global store"} {
		if !strings.Contains(got, h) {
			t.Errorf("missing %q in\n%s", h, got)
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file:\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	for name, d := range map[string]*Description{"wordcount": wordCount(t), "fanout": fanOut(t)} {
		golden(t, name+".txt", Text(d))
		golden(t, name+".dot", Dot(d))
		golden(t, name+".mmd", Mermaid(d))
		js, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name+".json", string(js)+"\n")
	}
}

func TestRenderEscaping(t *testing.T) {
	d, err := NewBuilder().Subtopology("0").
		Source(`we"ird\name`, []string{`to"pic`}, "p").
		Processor("p", []string{"st\nore"}).Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	dot := Dot(d)
	if !strings.Contains(dot, `"0/we\"ird\\name"`) || !strings.Contains(dot, `"store:st\nore"`) {
		t.Errorf("dot escaping:\n%s", dot)
	}
	mm := Mermaid(d)
	if strings.Contains(mm, `we"ird`) || !strings.Contains(mm, "we#quot;ird") {
		t.Errorf("mermaid escaping:\n%s", mm)
	}
}

func TestPredecessors(t *testing.T) {
	d, err := NewBuilder().Subtopology("0").
		Source("a", []string{"t"}, "c", "b").
		Source("z", []string{"t2"}, "c").
		Processor("b", nil, "c").
		Processor("c", nil, "sink").
		Sink("sink", "out").Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	// b has size 3 (b, c, sink) vs a 6 and z 3; order: size desc then name.
	if got := d.Predecessors("0", "c"); strings.Join(got, ",") != "a,b,z" {
		t.Errorf("predecessors of c = %v", got)
	}
	if got := d.Predecessors("0", "a"); got != nil {
		t.Errorf("predecessors of a = %v", got)
	}
	if got := d.Predecessors("9", "c"); got != nil {
		t.Errorf("unknown subtopology = %v", got)
	}
	if got := d.Predecessors("0", "nope"); got != nil {
		t.Errorf("unknown node = %v", got)
	}
}

func TestValidate(t *testing.T) {
	topic := "out"
	empty := ""
	src := func(name string, succ ...string) Node {
		return Node{Name: name, Type: NodeTypeSource, SourceTopics: []string{"in"}, Successors: succ}
	}
	proc := func(name string, succ ...string) Node {
		return Node{Name: name, Type: NodeTypeProcessor, Successors: succ}
	}
	sink := Node{Name: "k", Type: NodeTypeSink, SinkTopic: &topic}
	okGlobal := GlobalStore{
		Source:    Node{Name: "gs", Type: NodeTypeSource, SourceTopics: []string{"g"}, Successors: []string{"gp"}},
		Processor: Node{Name: "gp", Type: NodeTypeProcessor, Stores: []string{"st"}},
	}
	one := func(nodes ...Node) *Description {
		return &Description{Subtopologies: []Subtopology{{ID: "0", Nodes: nodes}}}
	}
	cases := map[string]*Description{
		"nil":                nil,
		"empty subtopology":  {Subtopologies: []Subtopology{{ID: ""}}},
		"dup subtopology":    {Subtopologies: []Subtopology{{ID: "0"}, {ID: "0"}}},
		"unknown type":       one(Node{Name: "x", Type: 9}),
		"empty name":         one(Node{Type: NodeTypeProcessor}),
		"dup node":           one(proc("p"), proc("p")),
		"dangling successor": one(src("s", "nope")),
		"self successor":     one(proc("p", "p")),
		"dup successor":      one(src("s", "p", "p"), proc("p")),
		"source successor":   one(proc("p", "s"), src("s")),
		"source no topics":   one(Node{Name: "s", Type: NodeTypeSource}),
		"source empty topic": one(Node{Name: "s", Type: NodeTypeSource, SourceTopics: []string{""}}),
		"source with store":  one(Node{Name: "s", Type: NodeTypeSource, SourceTopics: []string{"a"}, Stores: []string{"x"}}),
		"processor topics":   one(Node{Name: "p", Type: NodeTypeProcessor, SourceTopics: []string{"a"}}),
		"processor sink":     one(Node{Name: "p", Type: NodeTypeProcessor, SinkTopic: &topic}),
		"sink successors":    one(Node{Name: "k", Type: NodeTypeSink, Successors: []string{"p"}}, proc("p")),
		"sink empty topic":   one(Node{Name: "k", Type: NodeTypeSink, SinkTopic: &empty}),
		"sink stores":        one(Node{Name: "k", Type: NodeTypeSink, Stores: []string{"s"}}),
		"empty store":        one(Node{Name: "p", Type: NodeTypeProcessor, Stores: []string{""}}),
		"cycle":              one(src("s", "a"), proc("a", "b"), proc("b", "a")),
		"global source type": {GlobalStores: []GlobalStore{{Source: proc("gs"), Processor: okGlobal.Processor}}},
		"global proc type":   {GlobalStores: []GlobalStore{{Source: okGlobal.Source, Processor: sink}}},
		"global no store":    {GlobalStores: []GlobalStore{{Source: okGlobal.Source, Processor: proc("gp")}}},
		"global proc succ":   {GlobalStores: []GlobalStore{{Source: okGlobal.Source, Processor: Node{Name: "gp", Type: NodeTypeProcessor, Stores: []string{"s"}, Successors: []string{"x"}}}}},
		"global bad succ":    {GlobalStores: []GlobalStore{{Source: src("gs", "other"), Processor: okGlobal.Processor}}},
		"global same name":   {GlobalStores: []GlobalStore{{Source: src("gp"), Processor: okGlobal.Processor}}},
	}
	for name, d := range cases {
		if err := d.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate() = %v, want ErrInvalid", name, err)
		}
	}
	good := []*Description{
		{},
		one(src("s", "p"), proc("p", "k"), sink),
		one(src("s", "k"), Node{Name: "k", Type: NodeTypeSink}),
		{GlobalStores: []GlobalStore{okGlobal}},
		{GlobalStores: []GlobalStore{{Source: src("gs"), Processor: okGlobal.Processor}}},
		wordCount(t), fanOut(t),
	}
	for i, d := range good {
		if err := d.Validate(); err != nil {
			t.Errorf("good %d: %v", i, err)
		}
	}
}

func TestWireRoundTrip(t *testing.T) {
	for _, d := range []*Description{wordCount(t), fanOut(t), {}} {
		req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		req.TopologyDescription = d.ToRequest()
		// Through the real encoding and back.
		raw := req.AppendTo(nil)
		back := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		if err := back.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		got, err := FromRequest(&back.TopologyDescription)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(d) {
			t.Errorf("request round trip changed description:\n%s\nvs\n%s", Text(got), Text(d))
		}
		resp := kmsg.NewPtrStreamsGroupDescribeResponse()
		resp.Version = 1
		g := kmsg.NewStreamsGroupDescribeResponseGroup()
		g.TopologyDescription = d.ToDescribe()
		g.TopologyDescriptionStatus = 3
		resp.Groups = append(resp.Groups, g)
		rawResp := resp.AppendTo(nil)
		backResp := kmsg.NewPtrStreamsGroupDescribeResponse()
		backResp.Version = 1
		if err := backResp.ReadFrom(rawResp); err != nil {
			t.Fatal(err)
		}
		got, err = FromDescribe(backResp.Groups[0].TopologyDescription)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(d) {
			t.Errorf("describe round trip changed description")
		}
	}
	if d, err := FromDescribe(nil); d != nil || err != nil {
		t.Errorf("FromDescribe(nil) = %v, %v", d, err)
	}
	if _, err := FromRequest(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("FromRequest(nil) = %v", err)
	}
	w := kmsg.NewTopologyDescription()
	w.Subtopologies = []kmsg.TopologyDescriptionSubtopology{{SubtopologyID: "0", Nodes: []kmsg.TopologyDescriptionNode{{Name: "x", NodeType: 4}}}}
	if _, err := FromRequest(&w); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad node type = %v", err)
	}
	w.Subtopologies = nil
	w.GlobalStores = []kmsg.TopologyDescriptionGlobalStore{{Source: kmsg.TopologyDescriptionNode{Name: "s", NodeType: 0}}}
	if _, err := FromRequest(&w); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad global node type = %v", err)
	}
}

func TestJSONRoundTripAndStability(t *testing.T) {
	for _, d := range []*Description{wordCount(t), fanOut(t), {}} {
		a, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Unmarshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(d) {
			t.Errorf("JSON round trip changed description")
		}
		b, _ := back.Clone().MarshalJSON()
		if string(a) != string(b) {
			t.Errorf("encoding not stable:\n%s\n%s", a, b)
		}
		if d.Size() != len(a) {
			t.Errorf("Size() = %d, want %d", d.Size(), len(a))
		}
	}
	bad := []string{
		``, `{`, `null x`, `{"version":2,"subtopologies":[],"globalStores":[]}`,
		`{"version":1,"subtopologies":[],"globalStores":[],"extra":1}`,
		`{"version":1,"subtopologies":[{"id":"0","nodes":[{"name":"a","type":"FOO"}]}],"globalStores":[]}`,
		`{"version":1,"subtopologies":[],"globalStores":[{"source":{"name":"a","type":"X"},"processor":{}}]}`,
		`{"version":1,"subtopologies":[],"globalStores":[]} {}`,
	}
	for _, s := range bad {
		if _, err := Unmarshal([]byte(s)); err == nil {
			t.Errorf("Unmarshal(%q) succeeded", s)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	d := fanOut(t)
	c := d.Clone()
	c.Subtopologies[0].Nodes[0].Successors[0] = "changed"
	*c.Subtopologies[0].Nodes[3].SinkTopic = "changed"
	if d.Equal(c) {
		t.Fatal("clone shares memory with original")
	}
	if Text(d) != fanOutText {
		t.Fatal("original modified through clone")
	}
	var nilD *Description
	if nilD.Clone() != nil || !nilD.Equal(nil) || nilD.Equal(d) {
		t.Fatal("nil handling")
	}
}

func TestBuilderRejectsInvalid(t *testing.T) {
	_, err := NewBuilder().Subtopology("0").Source("s", nil, "p").Done().Build()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Build() = %v, want ErrInvalid", err)
	}
}

// Rendering must not blow up on wide diamond chains (sizes saturate) or on
// descriptions that never passed Validate.
func TestRenderRobustness(t *testing.T) {
	b := NewBuilder().Subtopology("0")
	b.Source("s", []string{"in"}, "a0", "b0")
	for i := 0; i < 100; i++ {
		next := []string{"a" + itoa(i+1), "b" + itoa(i+1)}
		if i == 99 {
			next = []string{"k"}
		}
		b.Processor("a"+itoa(i), nil, next...)
		b.Processor("b"+itoa(i), nil, next...)
	}
	b.Sink("k", "out")
	d, err := b.Done().Build()
	if err != nil {
		t.Fatal(err)
	}
	// 2^100 paths: sizes saturate, the rendering still lists every node once.
	if txt := Text(d); strings.Count(txt, "\n    Processor: ") != 200 || !strings.Contains(txt, "Source: s (topics: [in])") {
		t.Errorf("unexpected text:\n%s", txt)
	}
	cyc := &Description{Subtopologies: []Subtopology{{ID: "x", Nodes: []Node{
		{Name: "a", Type: NodeTypeProcessor, Successors: []string{"b", "missing"}},
		{Name: "b", Type: NodeTypeProcessor, Successors: []string{"a"}},
		{Name: "c", Type: 7},
	}}}}
	_ = Text(cyc)
	_ = Dot(cyc)
	_ = Mermaid(cyc)
	if _, err := cyc.MarshalJSON(); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func BenchmarkText(b *testing.B) {
	d := fanOut(b)
	for b.Loop() {
		_ = Text(d)
	}
}

func BenchmarkMarshalJSON(b *testing.B) {
	d := fanOut(b)
	for b.Loop() {
		_, _ = d.MarshalJSON()
	}
}

func BenchmarkValidate(b *testing.B) {
	d := fanOut(b)
	for b.Loop() {
		_ = d.Validate()
	}
}
