// Package topodesctest provides test helpers for topology-description
// plugins: an in-process remote store speaking the http plugin's contract
// (with fault injection and call counting) and a contract test suite every
// topodesc.Plugin must pass.
package topodesctest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/muster-io/muster/internal/streams/topology"
)

// DefaultMaxBytes is the size above which the Store answers PUT with 413.
const DefaultMaxBytes = 1 << 20

// Hang, passed as status to FailNext, makes the store hold the request open
// until the client gives up (its context ends) or the store is closed.
const Hang = -1

// Store is an httptest-based remote description store implementing the
// topodesc http plugin contract:
//
//	PUT    /groups/{group}/topology/{epoch}  store (400 if not a valid
//	       canonical description, 413 above MaxBytes), 204
//	GET    /groups/{group}/topology/{epoch}  200 + JSON, or 404
//	DELETE /groups/{group}/topology          204 (also when nothing stored)
//
// It keeps every epoch PUT for a group until the group is deleted. Tests
// can inject answers with FailNext and read per-method call counts.
type Store struct {
	// URL is the base URL to configure the http plugin with.
	URL string

	srv  *httptest.Server
	quit chan struct{}
	once sync.Once

	mu       sync.Mutex
	maxBytes int
	data     map[string]map[int32][]byte
	faults   []fault
	calls    map[string]int
}

type fault struct {
	method string // "" = any method
	status int    // HTTP status or Hang
	left   int
}

// NewStore starts a Store on a loopback port. Call Close when done.
func NewStore() *Store {
	s := &Store{
		quit:     make(chan struct{}),
		maxBytes: DefaultMaxBytes,
		data:     map[string]map[int32][]byte{},
		calls:    map[string]int{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close releases hanging requests and stops the server.
func (s *Store) Close() {
	s.once.Do(func() {
		close(s.quit)
		s.srv.Close()
	})
}

// SetMaxBytes changes the PUT size limit (bytes of request body).
func (s *Store) SetMaxBytes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxBytes = n
}

// FailNext makes the next n calls of method ("" = any method) answer status
// (e.g. 413, 400, 422, 500, 404) instead of being served, or hang when
// status is Hang. Faults queue up in the order given.
func (s *Store) FailNext(method string, status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{method: method, status: status, left: n})
}

// Calls returns how many requests with method reached the store (faulted
// ones included).
func (s *Store) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Stored returns the body stored for (group, epoch).
func (s *Store) Stored(group string, epoch int32) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[group][epoch]
	return b, ok
}

// Groups returns the number of groups with at least one stored epoch.
func (s *Store) Groups() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.data)
}

func (s *Store) takeFault(method string) (int, bool) {
	for i := range s.faults {
		f := &s.faults[i]
		if f.method != "" && f.method != method {
			continue
		}
		status := f.status
		f.left--
		if f.left <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return status, true
	}
	return 0, false
}

func (s *Store) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls[r.Method]++
	status, faulted := s.takeFault(r.Method)
	maxBytes := s.maxBytes
	s.mu.Unlock()
	if faulted {
		if status == Hang {
			select {
			case <-r.Context().Done():
			case <-s.quit:
			}
			return
		}
		http.Error(w, "injected fault", status)
		return
	}
	group, epoch, hasEpoch, ok := parsePath(r.URL.EscapedPath())
	if !ok {
		http.Error(w, "bad path", http.StatusNotFound)
		return
	}
	switch {
	case r.Method == http.MethodPut && hasEpoch:
		body, err := io.ReadAll(io.LimitReader(r.Body, int64(maxBytes)+1))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > maxBytes {
			http.Error(w, "description too large", http.StatusRequestEntityTooLarge)
			return
		}
		d, err := topology.Unmarshal(body)
		if err == nil {
			err = d.Validate()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		if s.data[group] == nil {
			s.data[group] = map[int32][]byte{}
		}
		s.data[group][epoch] = body
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && hasEpoch:
		s.mu.Lock()
		body, found := s.data[group][epoch]
		s.mu.Unlock()
		if !found {
			http.Error(w, "not stored", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case r.Method == http.MethodDelete && !hasEpoch:
		s.mu.Lock()
		delete(s.data, group)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && !hasEpoch:
		s.mu.Lock()
		epochs := []int32{}
		for e := range s.data[group] {
			epochs = append(epochs, e)
		}
		s.mu.Unlock()
		if len(epochs) == 0 {
			http.Error(w, "not stored", http.StatusNotFound)
			return
		}
		slices.Sort(epochs)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string][]int32{"epochs": epochs})
	case r.Method == http.MethodDelete && hasEpoch:
		s.mu.Lock()
		delete(s.data[group], epoch)
		if len(s.data[group]) == 0 {
			delete(s.data, group)
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// parsePath splits "/groups/{group}/topology[/{epoch}]" (escaped form).
func parsePath(p string) (group string, epoch int32, hasEpoch, ok bool) {
	rest, found := strings.CutPrefix(p, "/groups/")
	if !found {
		return "", 0, false, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[1] != "topology" {
		return "", 0, false, false
	}
	g, err := url.PathUnescape(parts[0])
	if err != nil || g == "" {
		return "", 0, false, false
	}
	if len(parts) == 2 {
		return g, 0, false, true
	}
	e, err := strconv.ParseInt(parts[2], 10, 32)
	if err != nil || e < 0 {
		return "", 0, false, false
	}
	return g, int32(e), true, true
}
