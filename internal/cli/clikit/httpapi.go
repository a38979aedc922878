package clikit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DefaultHTTPPort is muster serve's default --http-listen port.
const DefaultHTTPPort = "9644"

// HTTPFlag is --http-server: muster's HTTP listener, for what only muster knows (rebalance
// history, lag status, topology descriptions of earlier epochs), which the Kafka protocol
// cannot carry.
type HTTPFlag struct {
	Server string
}

// AddFlags registers --http-server on f.
func (h *HTTPFlag) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&h.Server, "http-server", "", "muster's HTTP listener (host:port or URL) for --history, --lag-status and --all-epochs; default: the first --bootstrap-server host, port "+DefaultHTTPPort+".")
}

// HTTPAPI reads muster's JSON API (/api/v1).
type HTTPAPI struct {
	base    string
	client  *http.Client
	timeout time.Duration
}

// NewHTTPAPI builds the client: --http-server, else the first bootstrap server's host with
// muster's default HTTP port.
func NewHTTPAPI(h HTTPFlag, c ConnFlags) (*HTTPAPI, error) {
	base := strings.TrimSpace(h.Server)
	if base == "" {
		first := strings.TrimSpace(strings.Split(c.Bootstrap, ",")[0])
		host, _, err := net.SplitHostPort(first)
		if err != nil {
			return nil, Usagef("Cannot derive --http-server from --bootstrap-server %q: %v", first, err)
		}
		base = net.JoinHostPort(host, DefaultHTTPPort)
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	timeout := time.Duration(c.TimeoutMs) * time.Millisecond
	return &HTTPAPI{base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: timeout}, timeout: timeout}, nil
}

// Get reads path (under /api/v1) into v. A non-200 answer is an error with the API's message;
// an unreachable server says that these options need a muster broker's HTTP listener.
func (a *HTTPAPI) Get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/api/v1"+path, nil)
	if err != nil {
		return err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("muster's HTTP API at %s is not reachable (this option needs a muster broker; set --http-server): %v", a.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return &APIError{Status: resp.StatusCode, Msg: e.Error}
		}
		return &APIError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(body))}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("reading %s: %v", path, err)
	}
	return nil
}

// APIError is a non-200 answer of muster's HTTP API.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string { return e.Msg }

// NotFound reports a 404 (no such group, or nothing recorded).
func (e *APIError) NotFound() bool { return e.Status == http.StatusNotFound }
