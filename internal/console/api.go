package console

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/muster-io/muster/internal/lag"
)

// maxActionBody bounds an action's JSON body.
const maxActionBody = 64 << 10

func (c *Console) registerAPI(mux *http.ServeMux) {
	get := func(pattern string, h func(w http.ResponseWriter, r *http.Request) (any, error)) {
		mux.HandleFunc("GET "+pattern, func(w http.ResponseWriter, r *http.Request) {
			v, err := h(w, r)
			if err != nil {
				writeErr(w, err)
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
		mux.HandleFunc(pattern, methodNotAllowed("GET"))
	}
	post := func(pattern string, h func(w http.ResponseWriter, r *http.Request) (any, error)) {
		mux.HandleFunc("POST "+pattern, func(w http.ResponseWriter, r *http.Request) {
			v, err := h(w, r)
			if err != nil {
				writeActionErr(w, err)
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
		// Actions happen on POST only: any other method, GET included, changes nothing.
		mux.HandleFunc(pattern, methodNotAllowed("POST"))
	}
	get("/api/v1/overview", c.apiOverview)
	get("/api/v1/groups", c.apiGroups)
	get("/api/v1/groups/{group}", c.apiGroup)
	get("/api/v1/groups/{group}/offsets", c.apiOffsets)
	get("/api/v1/groups/{group}/lag", c.apiLag)
	get("/api/v1/groups/{group}/history", c.apiHistory)
	get("/api/v1/groups/{group}/topology", c.apiTopology)
	get("/api/v1/topics", c.apiTopics)
	get("/api/v1/topics/{topic}", c.apiTopic)
	mux.HandleFunc("GET /api/v1/events", c.serveEvents)
	mux.HandleFunc("/api/v1/events", methodNotAllowed("GET"))
	post("/api/v1/groups/{group}/offsets/reset", c.apiReset)
	post("/api/v1/groups/{group}/offsets/delete", c.apiDeleteOffsets)
	post("/api/v1/groups/{group}/delete", c.apiDeleteGroup)
	post("/api/v1/groups/{group}/members/{member}/remove", c.apiRemoveMember)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, fmt.Errorf("%w: no API endpoint %s", errNotFound, r.URL.Path))
	})
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeErr(w, fmt.Errorf("%w: %s %s (use %s)", errMethod, r.Method, r.URL.Path, allow))
	}
}

func (c *Console) apiOverview(_ http.ResponseWriter, r *http.Request) (any, error) {
	if _, err := parseQuery(r.URL.RawQuery); err != nil {
		return nil, err
	}
	return c.overview(r.Context())
}

// overview gathers the front page.
func (c *Console) overview(ctx context.Context) (*Overview, error) {
	ov := &Overview{NodeID: c.d.NodeID, Kafka: c.d.Kafka, Health: "ok", Shards: map[string]int{"loading": 0, "active": 0, "failed": 0}}
	var notReady []string
	for i, s := range c.d.Coordinator.RT.ShardStatus() {
		ov.Shards[s]++
		if s != "active" {
			notReady = append(notReady, fmt.Sprintf("shard %d %s", i, s))
		}
	}
	if len(notReady) > 0 {
		ov.Health = "not ready: " + strings.Join(notReady, ", ")
	}
	groups, err := c.listGroups(ctx)
	if err != nil {
		return nil, err
	}
	ov.Groups = len(groups)
	byType := map[string]*TypeCount{}
	for _, t := range groupTypes {
		byType[t] = &TypeCount{Type: t, ByState: map[string]int{}}
	}
	for _, g := range groups {
		tc := byType[g.Type]
		if tc == nil {
			tc = &TypeCount{Type: g.Type, ByState: map[string]int{}}
			byType[g.Type] = tc
		}
		tc.Total++
		tc.ByState[g.State]++
	}
	for _, t := range sortedKeys(byType) {
		ov.ByType = append(ov.ByType, *byType[t])
	}
	ov.Topics = len(c.d.Plane.Topics())
	if c.d.Lag != nil {
		snap := c.d.Lag.Snapshot()
		ov.Lag = map[string]int{"OK": 0, "WARNING": 0, "ERROR": 0}
		for _, g := range snap.Groups {
			ov.Lag[g.Status.String()]++
		}
		if !snap.At.IsZero() {
			ov.LagAt = snap.At.UTC().Format(time.RFC3339)
		}
	}
	return ov, nil
}

func (c *Console) apiGroups(_ http.ResponseWriter, r *http.Request) (any, error) {
	q, err := parseQuery(r.URL.RawQuery, "page", "size", "type", "state", "q")
	if err != nil {
		return nil, err
	}
	return c.groupList(r.Context(), q)
}

// groupList filters and pages the groups.
func (c *Console) groupList(ctx context.Context, q query) (*GroupList, error) {
	page, size, err := q.paging("")
	if err != nil {
		return nil, err
	}
	typ, err := q.oneOf("type", groupTypes...)
	if err != nil {
		return nil, err
	}
	state, err := q.oneOf("state", groupStates...)
	if err != nil {
		return nil, err
	}
	sub := q.str("q")
	if len(sub) > maxNameLen {
		return nil, badf(fmt.Sprintf("parameter \"q\" is longer than %d bytes", maxNameLen))
	}
	groups, err := c.listGroups(ctx)
	if err != nil {
		return nil, err
	}
	var out []GroupSummary
	for _, g := range groups {
		if (typ == "" || g.Type == typ) && (state == "" || g.State == state) && (sub == "" || strings.Contains(g.Group, sub)) {
			out = append(out, g)
		}
	}
	l := &GroupList{Page: newPage(page, size, len(out))}
	lo, hi := l.Page.bounds()
	l.Groups = append([]GroupSummary{}, out[lo:hi]...)
	return l, nil
}

// pathGroup validates the {group} path value.
func pathGroup(r *http.Request) (string, error) {
	g := r.PathValue("group")
	return g, checkName("group id", g)
}

// groupPageParams validates the {group} path value and the page and size parameters, the only
// ones a group's paged endpoints take.
func groupPageParams(r *http.Request) (id string, page, size int, err error) {
	if id, err = pathGroup(r); err != nil {
		return "", 0, 0, err
	}
	q, err := parseQuery(r.URL.RawQuery, "page", "size")
	if err != nil {
		return "", 0, 0, err
	}
	page, size, err = q.paging("")
	return id, page, size, err
}

func (c *Console) apiGroup(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, page, size, err := groupPageParams(r)
	if err != nil {
		return nil, err
	}
	return c.describeGroup(r.Context(), id, page, size)
}

func (c *Console) apiOffsets(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, page, size, err := groupPageParams(r)
	if err != nil {
		return nil, err
	}
	return c.offsets(r.Context(), id, page, size)
}

func (c *Console) apiLag(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, page, size, err := groupPageParams(r)
	if err != nil {
		return nil, err
	}
	return c.lagStatus(r.Context(), id, page, size)
}

// lagStatus is a group's evaluation from the latest lag sample, one page of partitions with
// their commit windows (the page's partitions evaluated now against the sample, Monitor.GroupDetail).
func (c *Console) lagStatus(ctx context.Context, id string, page, size int) (*LagStatus, error) {
	if c.d.Lag == nil {
		return nil, fmt.Errorf("%w: lag monitoring is off (muster.lag.enable=false)", errNotFound)
	}
	var pg Page
	d, ok, err := c.d.Lag.GroupDetail(ctx, id, func(total int) (int, int) {
		pg = newPage(page, size, total)
		return pg.bounds()
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		if _, err := c.groupType(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: group %s has no committed offsets in the latest lag sample (taken %s)", errNotFound, id,
			c.d.Lag.Snapshot().At.UTC().Format(time.RFC3339))
	}
	gl := &d.Group
	ls := &LagStatus{Group: id, EvaluatedAt: d.At.UTC().Format(time.RFC3339Nano), Status: gl.Status, TotalLag: gl.TotalLag,
		MaxLag: gl.MaxLag, MaxLagTopic: gl.MaxLagTopic, MaxLagPart: gl.MaxLagPartition, MaxTimeLagMs: gl.MaxTimeLagMs,
		Complete: gl.Complete, Page: pg}
	ls.Partitions = make([]LagPartition, 0, len(d.Partitions))
	for _, p := range d.Partitions {
		w := c.d.Lag.Window(id, p.Topic, p.Partition)
		if w == nil {
			w = []lag.Observation{}
		}
		ls.Partitions = append(ls.Partitions, LagPartition{PartitionLag: p, Window: w})
	}
	return ls, nil
}

func (c *Console) apiTopics(_ http.ResponseWriter, r *http.Request) (any, error) {
	q, err := parseQuery(r.URL.RawQuery, "page", "size", "q", "internal")
	if err != nil {
		return nil, err
	}
	return c.topicList(q)
}

func (c *Console) topicList(q query) (*TopicList, error) {
	page, size, err := q.paging("")
	if err != nil {
		return nil, err
	}
	internal, err := q.boolean("internal", true)
	if err != nil {
		return nil, err
	}
	sub := q.str("q")
	var names []TopicSummary
	for _, t := range c.d.Plane.Topics() {
		if (!internal && t.Internal) || (sub != "" && !strings.Contains(t.Name, sub)) {
			continue
		}
		names = append(names, TopicSummary{Name: t.Name, ID: hex.EncodeToString(t.ID[:]), Partitions: t.Partitions, Internal: t.Internal})
	}
	l := &TopicList{Page: newPage(page, size, len(names))}
	lo, hi := l.Page.bounds()
	l.Topics = append([]TopicSummary{}, names[lo:hi]...)
	for i := range l.Topics {
		c.fillTopicTotals(&l.Topics[i], nil)
	}
	return l, nil
}

// fillTopicTotals adds up a topic's messages, bytes and produce rate; stats, when given, are the
// topic's partitions already read.
func (c *Console) fillTopicTotals(t *TopicSummary, stats []TopicPartition) {
	if stats == nil {
		st, _ := c.d.Plane.TopicStats(t.Name)
		for _, s := range st {
			stats = append(stats, TopicPartition{LogStart: s.LogStart, HighWatermark: s.HighWatermark, Bytes: s.Bytes})
		}
		for i, r := range c.rates.topic(t.Name) {
			if i < len(stats) {
				stats[i].Rate = r
			}
		}
	}
	for _, s := range stats {
		t.Messages += s.HighWatermark - s.LogStart
		t.Bytes += s.Bytes
		t.Rate += s.Rate
	}
}

func (c *Console) apiTopic(_ http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("topic")
	if err := checkName("topic", name); err != nil {
		return nil, err
	}
	q, err := parseQuery(r.URL.RawQuery, "page", "size")
	if err != nil {
		return nil, err
	}
	page, size, err := q.paging("")
	if err != nil {
		return nil, err
	}
	return c.topic(name, page, size)
}

func (c *Console) topic(name string, page, size int) (*Topic, error) {
	info, ok := c.d.Plane.Topic(name)
	if !ok {
		return nil, fmt.Errorf("%w: topic %s", errNotFound, name)
	}
	st, _ := c.d.Plane.TopicStats(name)
	all := make([]TopicPartition, len(st))
	rates := c.rates.topic(name)
	for i, s := range st {
		all[i] = TopicPartition{Partition: s.Partition, LogStart: s.LogStart, HighWatermark: s.HighWatermark, Bytes: s.Bytes, Segments: s.Segments}
		if i < len(rates) {
			all[i].Rate = rates[i]
		}
	}
	t := &Topic{TopicSummary: TopicSummary{Name: info.Name, ID: hex.EncodeToString(info.ID[:]), Partitions: info.Partitions, Internal: info.Internal},
		Configs: info.Configs, Page: newPage(page, size, len(all))}
	c.fillTopicTotals(&t.TopicSummary, all)
	lo, hi := t.Page.bounds()
	t.Partitions = append([]TopicPartition{}, all[lo:hi]...)
	return t, nil
}

// readAction decodes an action's JSON body into v. Actions take JSON only (a cross-site form
// cannot send it without the browser asking first), no query parameters, and no unknown fields.
func readAction(r *http.Request, v any) error {
	if _, err := parseQuery(r.URL.RawQuery); err != nil {
		return err
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "application/json" {
		return badf("actions take a JSON body (Content-Type: application/json)")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxActionBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badf("malformed JSON body: " + err.Error())
	}
	if dec.More() {
		return badf("malformed JSON body: more than one value")
	}
	return nil
}

// writeActionErr answers a refused action with 409 and the tool's message.
func writeActionErr(w http.ResponseWriter, err error) {
	if ae, ok := err.(*ActionError); ok {
		writeJSON(w, http.StatusConflict, APIError{Error: ae.Msg})
		return
	}
	writeErr(w, err)
}

var resetScenarios = []string{"to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration"}

func (c *Console) apiReset(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathGroup(r)
	if err != nil {
		return nil, err
	}
	var req ResetRequest
	if err := readAction(r, &req); err != nil {
		return nil, err
	}
	return c.reset(r.Context(), id, req)
}

func (c *Console) reset(ctx context.Context, id string, req ResetRequest) (*ActionResult, error) {
	ok := false
	for _, s := range resetScenarios {
		ok = ok || req.Scenario == s
	}
	if !ok {
		return nil, badf(fmt.Sprintf("scenario %q is not one of %s", req.Scenario, strings.Join(resetScenarios, ", ")))
	}
	needsValue := req.Scenario == "to-offset" || req.Scenario == "shift-by" || req.Scenario == "to-datetime" || req.Scenario == "by-duration"
	if needsValue && strings.TrimSpace(req.Value) == "" {
		return nil, badf(fmt.Sprintf("scenario %s needs a value", req.Scenario))
	}
	if !needsValue && req.Value != "" {
		return nil, badf(fmt.Sprintf("scenario %s takes no value", req.Scenario))
	}
	if req.AllTopics == (len(req.Topics) > 0) {
		return nil, badf("give topics or all_topics (one of them)")
	}
	if err := checkTopicArgs(req.Topics); err != nil {
		return nil, err
	}
	sum, err := c.groupType(ctx, id)
	if err != nil {
		return nil, err
	}
	req.Group, req.GroupType = id, sum.Type
	before, err := c.committed(ctx, id)
	if err != nil && err != errNotFound {
		return nil, err
	}
	res, err := c.d.Operator.ResetOffsets(ctx, req)
	if err != nil {
		return nil, err
	}
	cur := map[[2]any]int64{}
	for _, p := range before {
		cur[[2]any{p.Topic, p.Partition}] = p.CommittedOffset
	}
	for i := range res.Offsets {
		o := &res.Offsets[i]
		if v, ok := cur[[2]any{o.Topic, o.Partition}]; ok {
			o.Current = v
		}
	}
	return res, nil
}

// matchTopics reports whether a partition is named by topic arguments (topic or topic:0,1).
func matchTopics(args []string, topic string, partition int32) bool {
	for _, a := range args {
		name, parts, hasParts := strings.Cut(a, ":")
		if name != topic {
			continue
		}
		if !hasParts {
			return true
		}
		for _, p := range strings.Split(parts, ",") {
			if n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32); err == nil && int32(n) == partition {
				return true
			}
		}
	}
	return false
}

// committedRows lists a group's committed offsets (those of topics args names, or all when args
// is nil) as rows to delete.
func (c *Console) committedRows(ctx context.Context, id string, args []string) ([]PlannedOffset, error) {
	offs, err := c.committed(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []PlannedOffset
	for _, p := range offs {
		if args == nil || matchTopics(args, p.Topic, p.Partition) {
			out = append(out, PlannedOffset{Topic: p.Topic, Partition: p.Partition, Current: p.CommittedOffset, New: -1})
		}
	}
	return out, nil
}

func checkTopicArgs(ts []string) error {
	for _, t := range ts {
		if err := checkName("topic", t); err != nil {
			return err
		}
		if strings.HasPrefix(t, "-") {
			return badf(fmt.Sprintf("topic %q may not start with '-'", t))
		}
	}
	return nil
}

func (c *Console) apiDeleteOffsets(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathGroup(r)
	if err != nil {
		return nil, err
	}
	var req DeleteOffsetsRequest
	if err := readAction(r, &req); err != nil {
		return nil, err
	}
	if len(req.Topics) == 0 {
		return nil, badf("give the topics whose offsets to delete")
	}
	if err := checkTopicArgs(req.Topics); err != nil {
		return nil, err
	}
	sum, err := c.groupType(r.Context(), id)
	if err != nil {
		return nil, err
	}
	req.Group, req.GroupType = id, sum.Type
	rows, err := c.committedRows(r.Context(), id, req.Topics)
	if err != nil {
		return nil, err
	}
	res, err := c.d.Operator.DeleteOffsets(r.Context(), req)
	if err != nil {
		return nil, err
	}
	res.Offsets = rows
	return res, nil
}

func (c *Console) apiDeleteGroup(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathGroup(r)
	if err != nil {
		return nil, err
	}
	var req GroupRequest
	if err := readAction(r, &req); err != nil {
		return nil, err
	}
	sum, err := c.groupType(r.Context(), id)
	if err != nil {
		return nil, err
	}
	req.Group, req.GroupType = id, sum.Type
	rows, err := c.committedRows(r.Context(), id, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.d.Operator.DeleteGroup(r.Context(), req)
	if err != nil {
		return nil, err
	}
	res.Offsets = rows
	return res, nil
}

func (c *Console) apiRemoveMember(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathGroup(r)
	if err != nil {
		return nil, err
	}
	member := r.PathValue("member")
	if err := checkName("member id", member); err != nil {
		return nil, err
	}
	var req MemberRequest
	if err := readAction(r, &req); err != nil {
		return nil, err
	}
	g, err := c.describeGroup(r.Context(), id, 1, maxPage)
	if err != nil {
		return nil, err
	}
	var found *Member
	for i := range g.Members {
		if g.Members[i].MemberID == member {
			found = &g.Members[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: member %s of group %s", errNotFound, member, id)
	}
	req.Group, req.GroupType, req.MemberID, req.InstanceID = id, g.Type, member, found.InstanceID
	return c.d.Operator.RemoveMember(r.Context(), req)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
