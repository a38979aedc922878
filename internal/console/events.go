package console

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// hub streams change events to live pages (server-sent events). Every PollInterval it computes
// a fingerprint of each watched thing (the overview, a group, a topic) and tells that thing's
// subscribers when it changed; pages then fetch their fresh content. Only watched things are
// read.
type hub struct {
	c      *Console
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	fps    map[string]uint64
	closed bool
	done   chan struct{}
}

func newHub(c *Console) *hub {
	return &hub{c: c, subs: map[string]map[chan struct{}]struct{}{}, fps: map[string]uint64{}, done: make(chan struct{})}
}

// subscribe registers a subscriber of key. The key's fingerprint is taken now if it has none,
// so that a change right after the subscriber's first refresh (which follows the hello event)
// is seen by the next poll.
func (h *hub) subscribe(ctx context.Context, key string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	_, known := h.fps[key]
	h.mu.Unlock()
	var fp uint64
	ok := false
	if !known {
		fp, ok = h.fingerprint(ctx, key)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[key] == nil {
		h.subs[key] = map[chan struct{}]struct{}{}
	}
	if _, known := h.fps[key]; !known && ok {
		h.fps[key] = fp
	}
	h.subs[key][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[key], ch)
		if len(h.subs[key]) == 0 {
			delete(h.subs, key)
			delete(h.fps, key)
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// poll fingerprints every watched key and notifies the subscribers of those that changed.
func (h *hub) poll(ctx context.Context) {
	h.mu.Lock()
	keys := make([]string, 0, len(h.subs))
	for k := range h.subs {
		keys = append(keys, k)
	}
	h.mu.Unlock()
	for _, k := range keys {
		fp, ok := h.fingerprint(ctx, k)
		if !ok {
			continue
		}
		h.mu.Lock()
		old, seen := h.fps[k]
		if _, watched := h.subs[k]; watched {
			h.fps[k] = fp
		}
		if seen && old != fp {
			for ch := range h.subs[k] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		h.mu.Unlock()
	}
}

// fingerprint hashes what a page of key shows.
func (h *hub) fingerprint(ctx context.Context, key string) (uint64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	f := fnv.New64a()
	enc := json.NewEncoder(f)
	c := h.c
	switch {
	case key == "overview":
		ov, err := c.overview(ctx)
		if err != nil {
			return 0, false
		}
		ov.LagAt = ""
		enc.Encode(ov)
		groups, err := c.listGroups(ctx)
		if err != nil {
			return 0, false
		}
		enc.Encode(groups)
	case strings.HasPrefix(key, "group/"):
		id := strings.TrimPrefix(key, "group/")
		g, err := c.describeGroup(ctx, id, 1, maxPageSize*100)
		if err != nil {
			fmt.Fprint(f, err.Error())
			return f.Sum64(), true
		}
		enc.Encode(g)
		offs, err := c.committed(ctx, id)
		if err == nil {
			enc.Encode(offs)
		}
		if gl, ok := c.lagGroups()[id]; ok {
			fmt.Fprint(f, gl.Status, gl.TotalLag, gl.MaxTimeLagMs)
		}
		fmt.Fprint(f, c.historyVersion(ctx, id))
	case strings.HasPrefix(key, "topic/"):
		name := strings.TrimPrefix(key, "topic/")
		st, ok := c.d.Plane.TopicStats(name)
		if !ok {
			fmt.Fprint(f, "gone")
			return f.Sum64(), true
		}
		enc.Encode(st)
	default:
		return 0, false
	}
	return f.Sum64(), true
}

// serveEvents streams "change" events for one key until the client leaves: GET
// /api/v1/events[?group=g | ?topic=t].
func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r.URL.RawQuery, "group", "topic")
	if err != nil {
		writeErr(w, err)
		return
	}
	key := "overview"
	switch g, t := q.str("group"), q.str("topic"); {
	case g != "" && t != "":
		writeErr(w, badf("give group or topic, not both"))
		return
	case g != "":
		if err := checkName("group", g); err != nil {
			writeErr(w, err)
			return
		}
		key = "group/" + g
	case t != "":
		if err := checkName("topic", t); err != nil {
			writeErr(w, err)
			return
		}
		key = "topic/" + t
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeErr(w, fmt.Errorf("streaming is not supported by this connection"))
		return
	}
	ch, cancel := c.events.subscribe(r.Context(), key)
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	data, _ := json.Marshal(map[string]string{"key": key})
	fmt.Fprintf(w, "retry: 2000\nevent: hello\ndata: %s\n\n", data)
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.events.done:
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-ch:
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", data)
		}
		fl.Flush()
	}
}

// watched lists the keys with subscribers (tests).
func (h *hub) watched() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.subs))
	for k := range h.subs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
