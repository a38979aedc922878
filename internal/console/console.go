// Package console is muster's web console and its JSON API, served on the HTTP listener: /ui
// (pages rendered on the server from html/template, a small script for live updates over
// server-sent events and for the operator actions, SVG drawn in Go; everything embedded in the
// binary) and /api/v1 (the same facts as JSON). It reads through the group coordinator's
// adapters and the data plane, and acts only through its Operator, on POST.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/lag"
)

// Deps is what the console reads and acts through.
type Deps struct {
	Coordinator *api.Service
	Plane       *data.Plane
	// Lag is the lag monitor; nil when lag monitoring is off.
	Lag *lag.Monitor
	// Operator performs the operator actions (reset offsets, delete offsets, delete a group,
	// remove a member).
	Operator Operator
	// NodeID and Kafka describe the broker on the overview.
	NodeID int32
	Kafka  string
	Now    func() time.Time
	Log    *slog.Logger
	// PollInterval is how often live pages are checked for changes (default 1 s).
	PollInterval time.Duration
}

// Console serves /ui and /api/v1.
type Console struct {
	d      Deps
	mux    *http.ServeMux
	events *hub
	rates  *rates
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// New builds the console; Start runs its background work.
func New(d Deps) *Console {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.PollInterval <= 0 {
		d.PollInterval = time.Second
	}
	c := &Console{d: d, mux: http.NewServeMux()}
	c.events = newHub(c)
	c.rates = newRates()
	c.Register(c.mux)
	return c
}

// Start runs the change detection of live pages and the produce-rate sampler until Close.
func (c *Console) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.loop(ctx)
	}()
}

// Close stops the background work and ends the event streams.
func (c *Console) Close() {
	if c.stop != nil {
		c.stop()
	}
	c.events.close()
	c.wg.Wait()
}

func (c *Console) loop(ctx context.Context) {
	t := time.NewTicker(c.d.PollInterval)
	defer t.Stop()
	for {
		c.rates.sample(c.d.Plane, c.d.Now())
		c.events.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ServeHTTP serves /ui and /api/v1.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.mux.ServeHTTP(w, r) }

// Register adds the console's routes to mux.
func (c *Console) Register(mux *http.ServeMux) {
	c.registerAPI(mux)
	c.registerUI(mux)
}

// lagGroups is the latest lag sample's groups (empty when lag monitoring is off).
func (c *Console) lagGroups() map[string]*lag.GroupLag {
	if c.d.Lag == nil {
		return nil
	}
	return c.d.Lag.Snapshot().Groups
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// badRequest is a malformed parameter (HTTP 400 with its message).
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(msg string) error { return &badRequest{msg} }

// writeErr answers an error as JSON: 400 for bad input, 404 for a missing group or topic, 405
// for a wrong method, 503 while the coordinator loads, 500 otherwise.
func writeErr(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var br *badRequest
	switch {
	case errors.As(err, &br):
		status = http.StatusBadRequest
	case errors.Is(err, errNotFound):
		status = http.StatusNotFound
	case errors.Is(err, errMethod):
		status = http.StatusMethodNotAllowed
	case isUnavailable(err):
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, APIError{Error: err.Error()})
}

var errMethod = errors.New("method not allowed")
