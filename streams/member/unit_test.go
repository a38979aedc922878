package member

import (
	"strings"
	"testing"

	"github.com/muster-io/muster/internal/streams/topology"
)

func TestTaskSet(t *testing.T) {
	s := NewTaskSet(TaskID{"1", 0}, TaskID{"0", 2}, TaskID{"0", 0}, TaskID{"0", 2})
	if s.String() != "0:[0,2] 1:[0]" || s.Len() != 3 {
		t.Fatalf("set %v", s)
	}
	if !s.Contains(TaskID{"0", 2}) || s.Contains(TaskID{"0", 1}) {
		t.Fatal("Contains")
	}
	o := NewTaskSet(TaskID{"0", 2}, TaskID{"2", 5})
	if got := s.Minus(o).String(); got != "0:[0] 1:[0]" {
		t.Fatalf("Minus %s", got)
	}
	if got := s.Union(o).String(); got != "0:[0,2] 1:[0] 2:[5]" {
		t.Fatalf("Union %s", got)
	}
	w := s.toWire()
	if len(w) != 2 || w[0].SubtopologyID != "0" || len(w[0].Partitions) != 2 || !taskSetFromWire(w).Equal(s) {
		t.Fatalf("wire %+v", w)
	}
	if w := TaskSet(nil).toWire(); w == nil || len(w) != 0 {
		t.Fatal("empty set must be a non-null empty list on the wire")
	}
	if (TaskID{"3", 7}).String() != "3_7" {
		t.Fatal("TaskID.String")
	}
}

func TestConfigValidation(t *testing.T) {
	base := func() Config {
		return Config{Brokers: []string{"127.0.0.1:1"}, GroupID: "g",
			Topology: Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{"a", "b"},
				RepartitionSourceTopics: []TopicInfo{{Name: "r"}}}}}}
	}
	for name, tc := range map[string]struct {
		mod  func(*Config)
		want string
	}{
		"no brokers":       {func(c *Config) { c.Brokers = nil }, "Brokers is required"},
		"no group":         {func(c *Config) { c.GroupID = " " }, "GroupID is required"},
		"no subtopologies": {func(c *Config) { c.Topology.Subtopologies = nil }, "at least one subtopology"},
		"negative epoch":   {func(c *Config) { c.Topology.Epoch = -1 }, "negative"},
		"empty id":         {func(c *Config) { c.Topology.Subtopologies[0].ID = "" }, "empty id"},
		"duplicate id": {func(c *Config) {
			c.Topology.Subtopologies = append(c.Topology.Subtopologies, c.Topology.Subtopologies[0])
		}, "duplicate subtopology"},
		"bad copartition": {func(c *Config) {
			c.Topology.Subtopologies[0].CopartitionGroups = []CopartitionGroup{{SourceTopics: []string{"zz"}}}
		}, "not a source topic"},
		"bad repartition ref": {func(c *Config) {
			c.Topology.Subtopologies[0].CopartitionGroups = []CopartitionGroup{{RepartitionSourceTopics: []string{"a"}}}
		}, "not a repartition source topic"},
		"bad endpoint": {func(c *Config) { c.UserEndpoint = "host" }, "UserEndpoint"},
		"bad port":     {func(c *Config) { c.UserEndpoint = "host:70000" }, "UserEndpoint"},
		"bad description": {func(c *Config) {
			c.TopologyDescription = &topology.Description{Subtopologies: []topology.Subtopology{{ID: "0", Nodes: []topology.Node{{Name: "x", Type: 9}}}}}
		}, "TopologyDescription"},
	} {
		t.Run(name, func(t *testing.T) {
			c := base()
			tc.mod(&c)
			_, err := Start(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	c, err := base().normalized()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ProcessID) != 36 || c.RebalanceTimeout.Minutes() != 5 || !c.pushEnabled() {
		t.Fatalf("defaults %+v", c)
	}
	w, _ := base().Topology.toWire()
	c2 := base()
	c2.Topology.Subtopologies[0].CopartitionGroups = []CopartitionGroup{{SourceTopics: []string{"b", "a"}, RepartitionSourceTopics: []string{"r"}}}
	w2, err := c2.Topology.toWire()
	if err != nil || len(w.Subtopologies[0].CopartitionGroups) != 0 {
		t.Fatal(err)
	}
	g := w2.Subtopologies[0].CopartitionGroups[0]
	if len(g.SourceTopics) != 2 || g.SourceTopics[0] != 1 || g.SourceTopics[1] != 0 || g.RepartitionSourceTopics[0] != 0 {
		t.Fatalf("copartition indices %+v", g)
	}
}

func TestStatusString(t *testing.T) {
	if got := (Status{Code: StatusMissingSourceTopics, Detail: "x"}).String(); got != "MISSING_SOURCE_TOPICS: x" {
		t.Fatal(got)
	}
	if StatusCode(42).String() != "UNKNOWN(42)" {
		t.Fatal("unknown code")
	}
}
