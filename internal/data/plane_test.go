package data

import "testing"

// TestTopicLookups: Topic, TopicByID, Topics and Offsets agree and copy the
// configs; unknown names, IDs and partitions are reported as missing.
func TestTopicLookups(t *testing.T) {
	e := newEnv(t)
	b := e.createTopic("b", 2, map[string]string{cfgRetentionMs: "1000"})
	e.createTopic("a", 1, nil)
	byName, ok := e.p.Topic("b")
	if !ok || byName.ID != b.ID || byName.Partitions != 2 {
		t.Fatalf("Topic: %+v %v", byName, ok)
	}
	byID, ok := e.p.TopicByID(b.ID)
	if !ok || byID.Name != "b" || byID.Configs[cfgRetentionMs] != "1000" {
		t.Fatalf("TopicByID: %+v %v", byID, ok)
	}
	byID.Configs[cfgRetentionMs] = "changed"
	if again, _ := e.p.TopicByID(b.ID); again.Configs[cfgRetentionMs] != "1000" {
		t.Fatal("TopicByID returned the plane's own config map")
	}
	if _, ok := e.p.TopicByID([16]byte{1}); ok {
		t.Fatal("unknown ID found")
	}
	if _, ok := e.p.Topic("zz"); ok {
		t.Fatal("unknown name found")
	}
	if all := e.p.Topics(); len(all) != 2 || all[0].Name != "a" || all[1].Name != "b" {
		t.Fatalf("Topics: %+v", all)
	}
	for _, c := range []struct {
		topic string
		part  int32
	}{{"b", 2}, {"b", -1}, {"zz", 0}} {
		if _, _, ok := e.p.Offsets(c.topic, c.part); ok {
			t.Errorf("Offsets(%s, %d) found", c.topic, c.part)
		}
	}
}
