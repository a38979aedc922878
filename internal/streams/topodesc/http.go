package topodesc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/muster-io/muster/internal/streams/topology"
)

// HTTP contract of the "http" plugin's remote store (paths under the base
// URL; group ids are path-escaped, so "/" travels as %2F):
//
//	PUT    {url}/groups/{group}/topology/{epoch}  body: canonical JSON
//	       2xx ok; 413 → ErrTooLarge; 400, 422 → ErrInvalid; else transient
//	GET    {url}/groups/{group}/topology/{epoch}
//	       200 + canonical JSON → description; 404 → not stored; else error
//	DELETE {url}/groups/{group}/topology
//	       2xx or 404 → ok; else transient
//	GET    {url}/groups/{group}/topology
//	       200 + {"epochs":[e1,e2,...]} → the stored epochs; 404 → none; else error
//	DELETE {url}/groups/{group}/topology/{epoch}
//	       2xx or 404 → ok; else transient
//
// After a successful PUT of an epoch above 0 the plugin lists the group's
// epochs and deletes all but the one it put and the highest other (the
// two-epoch bound of Plugin; topology epochs only grow, so at epoch 0 there
// is no other).
//
// Network errors and timeouts are transient.
const httpContentType = "application/json"

// DefaultHTTPTimeout bounds one HTTP call (KIP-1331: plugin futures should
// settle in seconds).
const DefaultHTTPTimeout = 10 * time.Second

// maxHTTPResponse bounds the body read from the remote store.
const maxHTTPResponse = 64 << 20

// StatusError is a transient error for an unexpected HTTP status.
type StatusError struct {
	Method string
	Code   int
	Body   string // first bytes of the response body
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("topodesc: %s: remote store answered %d %s", e.Method, e.Code, http.StatusText(e.Code))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// HTTP is the "http" plugin: a client of a remote description store (see
// the contract above). Calls run on a fixed pool of workers with a bounded
// queue and a per-call timeout.
type HTTP struct {
	base    string
	client  *http.Client
	timeout time.Duration
	pool    *pool
}

// NewHTTP returns an http plugin for the store at baseURL (http or https).
// client nil means a dedicated http.Client; timeout <= 0 means
// DefaultHTTPTimeout.
func NewHTTP(baseURL string, client *http.Client, timeout time.Duration, workers, queue int) (*HTTP, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("topodesc: invalid http plugin url %q", baseURL)
	}
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: workers,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	if timeout <= 0 {
		timeout = DefaultHTTPTimeout
	}
	return &HTTP{
		base:    strings.TrimRight(baseURL, "/"),
		client:  client,
		timeout: timeout,
		pool:    newPool(workers, queue),
	}, nil
}

// Name returns "http".
func (h *HTTP) Name() string { return "http" }

func (h *HTTP) groupURL(groupID string) string {
	return h.base + "/groups/" + url.PathEscape(groupID) + "/topology"
}

func (h *HTTP) epochURL(groupID string, epoch int32) string {
	return h.groupURL(groupID) + "/" + strconv.FormatInt(int64(epoch), 10)
}

// do sends one request with the per-call timeout and returns the status and
// up to maxHTTPResponse bytes of body.
func (h *HTTP) do(ctx context.Context, method, u string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("topodesc: %s: %w", method, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", httpContentType)
	}
	req.Header.Set("Accept", httpContentType)
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("topodesc: %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse+1))
	if err != nil {
		return 0, nil, fmt.Errorf("topodesc: %s %s: read body: %w", method, u, err)
	}
	if len(data) > maxHTTPResponse {
		return 0, nil, fmt.Errorf("topodesc: %s %s: response larger than %d bytes", method, u, maxHTTPResponse)
	}
	return resp.StatusCode, data, nil
}

func snippet(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// SetTopology PUTs the canonical JSON of d. The description is validated
// locally first (ErrInvalid without a round trip); the size limit is the
// remote store's (413).
func (h *HTTP) SetTopology(ctx context.Context, groupID string, topologyEpoch int32, d *topology.Description) <-chan error {
	data, err := checkSet(groupID, topologyEpoch, d, 0)
	if err != nil {
		return errDone(err)
	}
	return h.pool.runErr(func(ctx context.Context) error {
		code, body, err := h.do(ctx, http.MethodPut, h.epochURL(groupID, topologyEpoch), data)
		if err != nil {
			return err
		}
		switch {
		case code >= 200 && code < 300:
			if topologyEpoch > 0 { // topology epochs only grow: at 0 there is no other
				h.trim(ctx, groupID, topologyEpoch)
			}
			return nil
		case code == http.StatusRequestEntityTooLarge:
			return fmt.Errorf("%w: remote store: %s", ErrTooLarge, snippet(body))
		case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
			return fmt.Errorf("%w: remote store answered %d: %s", ErrInvalid, code, snippet(body))
		}
		return &StatusError{Method: http.MethodPut, Code: code, Body: snippet(body)}
	}, ctx)
}

// GetTopology GETs the description stored at topologyEpoch.
func (h *HTTP) GetTopology(ctx context.Context, groupID string, topologyEpoch int32) <-chan GetResult {
	return h.pool.runGet(func(ctx context.Context) GetResult {
		code, body, err := h.do(ctx, http.MethodGet, h.epochURL(groupID, topologyEpoch), nil)
		if err != nil {
			return GetResult{Err: err}
		}
		switch code {
		case http.StatusOK:
			d, err := topology.Unmarshal(body)
			if err != nil {
				return GetResult{Err: fmt.Errorf("topodesc: GET: remote store sent a bad description: %w", err)}
			}
			return GetResult{Description: d}
		case http.StatusNotFound:
			return GetResult{}
		}
		return GetResult{Err: &StatusError{Method: http.MethodGet, Code: code, Body: snippet(body)}}
	}, ctx)
}

// DeleteTopology DELETEs all of groupID's descriptions; 404 is success.
func (h *HTTP) DeleteTopology(ctx context.Context, groupID string) <-chan error {
	return h.pool.runErr(func(ctx context.Context) error {
		code, body, err := h.do(ctx, http.MethodDelete, h.groupURL(groupID), nil)
		if err != nil {
			return err
		}
		if (code >= 200 && code < 300) || code == http.StatusNotFound {
			return nil
		}
		return &StatusError{Method: http.MethodDelete, Code: code, Body: snippet(body)}
	}, ctx)
}

// trim deletes the group's epochs beyond the two kept after setting set (best effort: a
// failure leaves an extra description for the next set or the broker's cleanup).
func (h *HTTP) trim(ctx context.Context, groupID string, set int32) {
	r := h.epochs(ctx, groupID)
	if r.Err != nil {
		return
	}
	for _, e := range keepEpochs(r.Epochs, set) {
		_ = h.deleteEpoch(ctx, groupID, e)
	}
}

func (h *HTTP) epochs(ctx context.Context, groupID string) EpochsResult {
	code, body, err := h.do(ctx, http.MethodGet, h.groupURL(groupID), nil)
	if err != nil {
		return EpochsResult{Err: err}
	}
	switch code {
	case http.StatusOK:
		var v struct {
			Epochs []int32 `json:"epochs"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return EpochsResult{Err: fmt.Errorf("topodesc: GET epochs: remote store sent %q: %v", snippet(body), err)}
		}
		if v.Epochs == nil {
			v.Epochs = []int32{}
		}
		slices.Sort(v.Epochs)
		return EpochsResult{Epochs: v.Epochs}
	case http.StatusNotFound:
		return EpochsResult{Epochs: []int32{}}
	}
	return EpochsResult{Err: &StatusError{Method: http.MethodGet, Code: code, Body: snippet(body)}}
}

func (h *HTTP) deleteEpoch(ctx context.Context, groupID string, epoch int32) error {
	code, body, err := h.do(ctx, http.MethodDelete, h.epochURL(groupID, epoch), nil)
	if err != nil {
		return err
	}
	if (code >= 200 && code < 300) || code == http.StatusNotFound {
		return nil
	}
	return &StatusError{Method: http.MethodDelete, Code: code, Body: snippet(body)}
}

// StoredEpochs GETs the group's stored epochs.
func (h *HTTP) StoredEpochs(ctx context.Context, groupID string) <-chan EpochsResult {
	return h.pool.runEpochs(func(ctx context.Context) EpochsResult { return h.epochs(ctx, groupID) }, ctx)
}

// DeleteTopologyEpoch DELETEs one epoch of groupID's descriptions; 404 is success.
func (h *HTTP) DeleteTopologyEpoch(ctx context.Context, groupID string, topologyEpoch int32) <-chan error {
	return h.pool.runErr(func(ctx context.Context) error { return h.deleteEpoch(ctx, groupID, topologyEpoch) }, ctx)
}

// Close cancels in-flight calls, stops the workers and closes idle
// connections; later calls deliver ErrClosed.
func (h *HTTP) Close() error {
	h.pool.close()
	h.client.CloseIdleConnections()
	return nil
}
