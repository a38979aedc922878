package coordinator

import "github.com/muster-io/muster/internal/metadata"

// markTopicsChanged flags every consumer group of the shard that subscribes to one of the
// changed topics (created, deleted or resized), or that subscribes with a regex, for a metadata
// refresh: its next heartbeat re-resolves its regexes and recomputes the KIP-1101 metadata hash,
// bumping the group epoch only if the hash changed (Kafka's onNewMetadataImage).
func markTopicsChanged(st *State, names []string) {
	if len(names) == 0 {
		return
	}
	for _, g := range st.consumerGroups() {
		if g.refresh {
			continue
		}
		if len(g.regexes) > 0 || len(g.regexRefs) > 0 {
			g.refresh = true
			continue
		}
		for _, n := range names {
			if g.nameRefs[n] > 0 {
				g.refresh = true
				break
			}
		}
	}
}

// changedTopics lists the topics that differ between two images: created, deleted, recreated
// with a new id, or resized (Kafka's TopicsDelta).
func changedTopics(old, cur *metadata.Image) []string {
	var out []string
	for _, n := range cur.TopicNames() {
		a, _ := cur.Topic(n)
		if b, ok := old.Topic(n); !ok || a != b {
			out = append(out, n)
		}
	}
	for _, n := range old.TopicNames() {
		if _, ok := cur.Topic(n); !ok {
			out = append(out, n)
		}
	}
	if old.Rack() != cur.Rack() {
		out = append(out, cur.TopicNames()...) // every partition's rack changed
	}
	return out
}
