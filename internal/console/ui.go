package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// page is what every console page renders: its navigation tab, the event stream that keeps it
// live, its URL (for pagers) and its own data.
type page struct {
	Nav    string
	Events string
	URL    *url.URL
	Data   any
	// Filter echoes the group list's filter.
	Filter struct{ Type, State, Q string }
}

// pagerData is one pager: the page, the URL it belongs to and the parameter that pages it.
type pagerData struct {
	N, Pages, Total int
	URL             *url.URL
	Param           string
}

var funcs = template.FuncMap{
	"lower": strings.ToLower,
	"add":   func(a, b int) int { return a + b },
	"sub":   func(a, b int64) int64 { return a - b },
	"join":  strings.Join,
	"pager": func(p Page, u *url.URL, param string) pagerData { return pagerData{p.Page, p.Pages, p.Total, u, param} },
	"pageURL": func(u *url.URL, param string, n int) string {
		q := u.Query()
		q.Set(param, strconv.Itoa(n))
		return u.Path + "?" + q.Encode()
	},
	"groupURL":    func(g string) string { return "/ui/groups/" + url.PathEscape(g) },
	"topicURL":    func(t string) string { return "/ui/topics/" + url.PathEscape(t) },
	"apiGroupURL": func(g string) string { return "/api/v1/groups/" + url.PathEscape(g) },
	"tps":         formatTPs,
	"tasks":       formatTasks,
	"sameTasks":   sameTasks,
	"bytes":       formatBytes,
	"rate":        func(r float64) string { return strconv.FormatFloat(r, 'f', 1, 64) + "/s" },
	"ms":          formatMs,
	"lagStatuses": func() []string { return []string{"OK", "WARNING", "ERROR"} },
	"groupTypes":  func() []string { return groupTypes },
	"groupStates": func() []string { return groupStates },
}

// pages are the parsed templates, one set per page.
var pages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"overview", "groups", "group", "topics", "topic", "error"} {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

func (c *Console) registerUI(mux *http.ServeMux) {
	static, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(static)
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", files))
	ui := func(pattern string, h func(r *http.Request, p *page) (string, error)) {
		mux.HandleFunc("GET "+pattern, func(w http.ResponseWriter, r *http.Request) {
			p := &page{URL: r.URL}
			name, err := h(r, p)
			if err != nil {
				c.renderError(w, r, err)
				return
			}
			c.render(w, r, http.StatusOK, name, p)
		})
	}
	ui("/ui", c.uiOverview)
	ui("/ui/{$}", c.uiOverview)
	ui("/ui/groups", c.uiGroups)
	ui("/ui/groups/{group}", c.uiGroup)
	ui("/ui/topics", c.uiTopics)
	ui("/ui/topics/{topic}", c.uiTopic)
	mux.HandleFunc("GET /ui/", func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, fmt.Errorf("%w: no page %s", errNotFound, r.URL.Path))
	})
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET")
		c.renderError(w, r, fmt.Errorf("%w: %s %s (pages are read with GET; actions are POSTs to /api/v1)", errMethod, r.Method, r.URL.Path))
	})
	mux.HandleFunc("/ui", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET")
		c.renderError(w, r, fmt.Errorf("%w: %s %s", errMethod, r.Method, r.URL.Path))
	})
}

// securityHeaders keep the console's pages to their own origin: scripts, styles and event
// streams only from the console, and no framing.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// render writes a page, or only its live part when the page's script asks for a refresh.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	t := pages[name]
	var buf bytes.Buffer
	tmpl := "layout"
	if r.Header.Get("X-Console-Fragment") == "1" {
		tmpl = "live"
	}
	if err := t.ExecuteTemplate(&buf, tmpl, p); err != nil {
		c.d.Log.Error("console: rendering a page", "page", name, "err", err)
		http.Error(w, "rendering failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var br *badRequest
	switch {
	case errorsAs(err, &br):
		status = http.StatusBadRequest
	case errorsIs(err, errNotFound):
		status = http.StatusNotFound
	case errorsIs(err, errMethod):
		status = http.StatusMethodNotAllowed
	case isUnavailable(err):
		status = http.StatusServiceUnavailable
	}
	p := &page{URL: r.URL, Data: struct {
		Status  string
		Message string
	}{fmt.Sprintf("%d %s", status, http.StatusText(status)), err.Error()}}
	c.render(w, r, status, "error", p)
}

func (c *Console) uiOverview(r *http.Request, p *page) (string, error) {
	if _, err := parseQuery(r.URL.RawQuery); err != nil {
		return "", err
	}
	ov, err := c.overview(r.Context())
	if err != nil {
		return "", err
	}
	p.Nav, p.Events, p.Data = "overview", "/api/v1/events", ov
	return "overview", nil
}

func (c *Console) uiGroups(r *http.Request, p *page) (string, error) {
	q, err := parseQuery(r.URL.RawQuery, "page", "size", "type", "state", "q")
	if err != nil {
		return "", err
	}
	// An empty filter field of the form means "any".
	for _, k := range []string{"type", "state", "q"} {
		if v, ok := q.v[k]; ok && v[0] == "" {
			delete(q.v, k)
		}
	}
	l, err := c.groupList(r.Context(), q)
	if err != nil {
		return "", err
	}
	p.Filter.Type, _ = q.oneOf("type", groupTypes...)
	p.Filter.State, _ = q.oneOf("state", groupStates...)
	p.Filter.Q = q.str("q")
	p.Nav, p.Events, p.Data = "groups", "/api/v1/events", l
	return "groups", nil
}

// groupPage is the group page's data.
type groupPage struct {
	G           *Group
	Offsets     *Offsets
	TotalLag    int64
	Chart       template.HTML
	Topology    *topologyView
	History     []historyRow
	HistoryNote string
	HistoryPage Page
}

func (c *Console) uiGroup(r *http.Request, p *page) (string, error) {
	id, err := pathGroup(r)
	if err != nil {
		return "", err
	}
	q, err := parseQuery(r.URL.RawQuery, "mpage", "msize", "opage", "osize", "hpage")
	if err != nil {
		return "", err
	}
	mpage, msize, err := q.paging("m")
	if err != nil {
		return "", err
	}
	opage, osize, err := q.paging("o")
	if err != nil {
		return "", err
	}
	hpage, err := q.intIn("hpage", 1, maxPage, 1)
	if err != nil {
		return "", err
	}
	ctx := r.Context()
	g, err := c.describeGroup(ctx, id, mpage, msize)
	if err != nil {
		return "", err
	}
	offs, err := c.offsets(ctx, id, opage, osize)
	if err != nil {
		return "", err
	}
	gp := &groupPage{G: g, Offsets: offs, TotalLag: offs.TotalLag, HistoryNote: "No rebalance history is recorded for this group."}
	if len(offs.Chart) > 0 {
		gp.Chart = lagChart(offs.Chart)
	}
	if g.Type == "streams" {
		gp.Topology = c.topologyView(ctx, id)
	}
	c.fillHistory(ctx, gp, hpage)
	p.Nav, p.Events, p.Data = "groups", "/api/v1/events?group="+url.QueryEscape(id), gp
	return "group", nil
}

func (c *Console) uiTopics(r *http.Request, p *page) (string, error) {
	q, err := parseQuery(r.URL.RawQuery, "page", "size", "q", "internal")
	if err != nil {
		return "", err
	}
	l, err := c.topicList(q)
	if err != nil {
		return "", err
	}
	p.Nav, p.Events, p.Data = "topics", "/api/v1/events", l
	return "topics", nil
}

func (c *Console) uiTopic(r *http.Request, p *page) (string, error) {
	name := r.PathValue("topic")
	if err := checkName("topic", name); err != nil {
		return "", err
	}
	q, err := parseQuery(r.URL.RawQuery, "page", "size")
	if err != nil {
		return "", err
	}
	pg, size, err := q.paging("")
	if err != nil {
		return "", err
	}
	t, err := c.topic(name, pg, size)
	if err != nil {
		return "", err
	}
	p.Nav, p.Events, p.Data = "topics", "/api/v1/events?topic="+url.QueryEscape(name), t
	return "topic", nil
}

// topologyView is a streams group's topology descriptions as the page draws them.
type topologyView struct {
	Note   string
	Epochs []topologyEpochView
}

type topologyEpochView struct {
	Epoch   int32
	Current bool
	Diff    []diffLine
	Graph   template.HTML
}

type diffLine struct{ Class, Text string }

// historyRow is one rebalance on the timeline.
type historyRow struct {
	Time, Cause, Summary string
	OldEpoch, NewEpoch   int32
	Members              []string
}

func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func formatMs(ms int64) string {
	switch {
	case ms < 0:
		return "–"
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 120_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	case ms < 7_200_000:
		return strconv.FormatFloat(float64(ms)/60_000, 'f', 1, 64) + " min"
	}
	return strconv.FormatFloat(float64(ms)/3_600_000, 'f', 1, 64) + " h"
}
