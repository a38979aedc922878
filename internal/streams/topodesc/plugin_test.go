package topodesc_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/streams/topodesc"
	"github.com/muster-io/muster/internal/streams/topodesc/topodesctest"
)

func TestMemoryContract(t *testing.T) {
	topodesctest.RunContractTests(t, func(t *testing.T) topodesc.Plugin {
		p, err := topodesc.New(topodesc.Config{Class: "memory"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}

func TestDiskContract(t *testing.T) {
	topodesctest.RunContractTests(t, func(t *testing.T) topodesc.Plugin {
		p, err := topodesc.New(topodesc.Config{Class: "disk", DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}

func TestHTTPContract(t *testing.T) {
	topodesctest.RunContractTests(t, func(t *testing.T) topodesc.Plugin {
		s := topodesctest.NewStore()
		t.Cleanup(s.Close)
		p, err := topodesc.New(topodesc.Config{Class: "http", HTTPURL: s.URL})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}

func TestNewConfig(t *testing.T) {
	p, err := topodesc.New(topodesc.Config{})
	if p != nil || err != nil {
		t.Fatalf("empty class: %v, %v", p, err)
	}
	for _, cfg := range []topodesc.Config{
		{Class: "redis"},
		{Class: "disk"},
		{Class: "http"},
		{Class: "http", HTTPURL: "ftp://x"},
		{Class: "http", HTTPURL: "::bad"},
	} {
		if p, err := topodesc.New(cfg); err == nil {
			p.Close()
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	cfg, err := topodesc.ParseConfig(map[string]string{
		topodesc.ConfigPluginClass:     " disk ",
		topodesc.ConfigMaxBytes:        "100",
		topodesc.ConfigHTTPURL:         "http://h:1",
		topodesc.ConfigHTTPTimeoutMs:   "2500",
		topodesc.ConfigHTTPConcurrency: "3",
		"unrelated.key":                "x",
	}, "/data")
	if err != nil {
		t.Fatal(err)
	}
	want := topodesc.Config{Class: "disk", MaxBytes: 100, DataDir: "/data", HTTPURL: "http://h:1",
		HTTPTimeout: 2500 * time.Millisecond, HTTPConcurrency: 3}
	if cfg != want {
		t.Errorf("ParseConfig = %+v, want %+v", cfg, want)
	}
	for _, props := range []map[string]string{
		{topodesc.ConfigMaxBytes: "lots"},
		{topodesc.ConfigHTTPTimeoutMs: "-1"},
		{topodesc.ConfigHTTPConcurrency: "x"},
		{topodesc.ConfigHTTPConcurrency: "-2"},
	} {
		if _, err := topodesc.ParseConfig(props, ""); err == nil {
			t.Errorf("ParseConfig(%v) succeeded", props)
		}
	}
}

func TestMaxBytesConfig(t *testing.T) {
	ctx := context.Background()
	small := topodesctest.Description("a")
	for _, class := range []string{"memory", "disk"} {
		p, err := topodesc.New(topodesc.Config{Class: class, MaxBytes: small.Size() - 1, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if err := topodesctest.WaitErr(t, p.SetTopology(ctx, "g", 1, small)); !errors.Is(err, topodesc.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", class, err)
		}
		p.Close()
		// Negative: no limit.
		p, err = topodesc.New(topodesc.Config{Class: class, MaxBytes: -1, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if err := topodesctest.WaitErr(t, p.SetTopology(ctx, "g", 1, topodesctest.LargeDescription(2<<20))); err != nil {
			t.Errorf("%s unlimited: %v", class, err)
		}
		p.Close()
	}
}

func TestDiskSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() topodesc.Plugin {
		p, err := topodesc.New(topodesc.Config{Class: "disk", DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := open()
	d := topodesctest.Description("durable")
	if err := topodesctest.WaitErr(t, p.SetTopology(ctx, "g/1", 7, d)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	// A stale temp file from a crash mid-write is cleaned up on open.
	stale := filepath.Join(dir, topodesc.DiskDirName, ".tmp-crashed")
	if err := os.WriteFile(stale, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	p = open()
	defer p.Close()
	r := topodesctest.WaitGet(t, p.GetTopology(ctx, "g/1", 7))
	if r.Err != nil || !r.Description.Equal(d) {
		t.Fatalf("after reopen: %v, %v", r.Description, r.Err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file not removed: %v", err)
	}
}

func TestDiskCorruptFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := topodesc.New(topodesc.Config{Class: "disk", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	path := func(g string) string { return filepath.Join(dir, topodesc.DiskDirName, topodesc.FileName(g)) }
	for name, content := range map[string]string{
		"garbage":      "\x00\x01not json",
		"truncated":    `{"group":"g","epoch":1,"description":{"version":1,"subto`,
		"wrong group":  `{"group":"other","epoch":1,"description":{"version":1,"subtopologies":[],"globalStores":[]}}`,
		"bad node":     `{"group":"g","epoch":1,"description":{"version":1,"subtopologies":[{"id":"0","nodes":[{"name":"a","type":"X","sourceTopics":[],"sinkTopic":null,"stores":[],"successors":[]}]}],"globalStores":[]}}`,
		"null content": `{"group":"g","epoch":1,"description":null}`,
	} {
		if err := os.WriteFile(path("g"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		r := topodesctest.WaitGet(t, p.GetTopology(ctx, "g", 1))
		if r.Err == nil || r.Description != nil {
			t.Errorf("%s: got %v, %v; want an error", name, r.Description, r.Err)
		}
	}
	// Delete still cleans up a corrupt file, and set overwrites it.
	if err := topodesctest.WaitErr(t, p.DeleteTopology(ctx, "g")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path("g")); !os.IsNotExist(err) {
		t.Errorf("file still present: %v", err)
	}
}

func TestDiskFileNames(t *testing.T) {
	seen := map[string]string{}
	for _, g := range []string{"a", "A", "a/b", "..", "x y", strings.Repeat("z", 100), strings.Repeat("z", 101), strings.Repeat("é", 400)} {
		n := topodesc.FileName(g)
		if strings.ContainsAny(n, `/\ `) || len(n) > 255 || strings.HasPrefix(n, ".") {
			t.Errorf("unsafe name %q for %q", n, g)
		}
		if strings.ToLower(n) != n {
			t.Errorf("name %q is not lower case", n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q share file %q", g, other, n)
		}
		seen[n] = g
	}
}

func newHTTP(t *testing.T, timeout time.Duration) (*topodesctest.Store, topodesc.Plugin) {
	t.Helper()
	s := topodesctest.NewStore()
	t.Cleanup(s.Close)
	p, err := topodesc.New(topodesc.Config{Class: "http", HTTPURL: s.URL + "/", HTTPTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return s, p
}

func TestHTTPStatusMapping(t *testing.T) {
	ctx := context.Background()
	d := topodesctest.Description("a")
	s, p := newHTTP(t, 5*time.Second)
	set := func() error { return topodesctest.WaitErr(t, p.SetTopology(ctx, "g", 1, d)) }
	get := func() topodesc.GetResult { return topodesctest.WaitGet(t, p.GetTopology(ctx, "g", 1)) }
	del := func() error { return topodesctest.WaitErr(t, p.DeleteTopology(ctx, "g")) }

	for _, c := range []struct {
		status    int
		permanent error
	}{
		{413, topodesc.ErrTooLarge},
		{400, topodesc.ErrInvalid},
		{422, topodesc.ErrInvalid},
		{500, nil},
		{503, nil},
		{404, nil},
		{409, nil},
	} {
		s.FailNext(http.MethodPut, c.status, 1)
		err := set()
		switch {
		case c.permanent != nil && !errors.Is(err, c.permanent):
			t.Errorf("PUT %d: err = %v, want %v", c.status, err, c.permanent)
		case c.permanent == nil && (err == nil || topodesc.IsPermanent(err)):
			t.Errorf("PUT %d: err = %v, want transient", c.status, err)
		}
		var se *topodesc.StatusError
		if c.permanent == nil && (!errors.As(err, &se) || se.Code != c.status) {
			t.Errorf("PUT %d: err = %v, want StatusError", c.status, err)
		}
	}
	if err := set(); err != nil {
		t.Fatalf("PUT after faults: %v", err)
	}

	s.FailNext(http.MethodGet, 404, 1)
	if r := get(); r.Err != nil || r.Description != nil {
		t.Errorf("GET 404: %v, %v; want not stored", r.Description, r.Err)
	}
	s.FailNext(http.MethodGet, 500, 2)
	for i := 0; i < 2; i++ {
		if r := get(); r.Err == nil {
			t.Errorf("GET 500 #%d succeeded", i)
		}
	}
	if r := get(); r.Err != nil || !r.Description.Equal(d) {
		t.Errorf("GET after faults: %v, %v", r.Description, r.Err)
	}

	s.FailNext(http.MethodDelete, 404, 1)
	if err := del(); err != nil {
		t.Errorf("DELETE 404: %v", err)
	}
	s.FailNext(http.MethodDelete, 500, 1)
	if err := del(); err == nil || topodesc.IsPermanent(err) {
		t.Errorf("DELETE 500: %v, want transient", err)
	}
	if err := del(); err != nil {
		t.Errorf("DELETE: %v", err)
	}
	if s.Groups() != 0 {
		t.Errorf("store still holds %d groups", s.Groups())
	}
	if got := s.Calls(http.MethodPut); got != 8 {
		t.Errorf("PUT calls = %d, want 8", got)
	}
	// 4 reads (a PUT of epoch 1 lists the group's epochs too, the two-epoch bound).
	if got := s.Calls(http.MethodGet); got != 5 {
		t.Errorf("GET calls = %d, want 5", got)
	}
	if got := s.Calls(http.MethodDelete); got != 3 {
		t.Errorf("DELETE calls = %d, want 3", got)
	}
}

func TestHTTPBadResponseBody(t *testing.T) {
	ctx := context.Background()
	srv := http.NewServeMux()
	srv.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{not json")) })
	hs := newServer(t, srv)
	p, err := topodesc.New(topodesc.Config{Class: "http", HTTPURL: hs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if r := topodesctest.WaitGet(t, p.GetTopology(ctx, "g", 1)); r.Err == nil {
		t.Error("bad body accepted")
	}
}

func TestHTTPTimeoutAndNetworkErrors(t *testing.T) {
	ctx := context.Background()
	s, p := newHTTP(t, 100*time.Millisecond)
	s.FailNext("", topodesctest.Hang, 3)
	if err := topodesctest.WaitErr(t, p.SetTopology(ctx, "g", 1, topodesctest.Description("a"))); err == nil || topodesc.IsPermanent(err) {
		t.Errorf("hung PUT: %v, want transient", err)
	}
	if r := topodesctest.WaitGet(t, p.GetTopology(ctx, "g", 1)); r.Err == nil {
		t.Error("hung GET succeeded")
	}
	if err := topodesctest.WaitErr(t, p.DeleteTopology(ctx, "g")); err == nil {
		t.Error("hung DELETE succeeded")
	}
	// Store gone: connection refused is transient.
	s.Close()
	if err := topodesctest.WaitErr(t, p.SetTopology(ctx, "g", 1, topodesctest.Description("a"))); err == nil || topodesc.IsPermanent(err) {
		t.Errorf("PUT to closed store: %v, want transient", err)
	}
}

// A hung backend must not make calls block: with every worker stuck and the
// queue full, further calls fail at once with ErrBusy.
func TestHTTPBoundedConcurrency(t *testing.T) {
	ctx := context.Background()
	s := topodesctest.NewStore()
	defer s.Close()
	p, err := topodesc.New(topodesc.Config{Class: "http", HTTPURL: s.URL, HTTPConcurrency: 2, QueueSize: 3, HTTPTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.FailNext("", topodesctest.Hang, 100)
	var chans []<-chan error
	busy := 0
	for i := 0; i < 10; i++ {
		ch := p.DeleteTopology(ctx, "g")
		select {
		case err := <-ch:
			if !errors.Is(err, topodesc.ErrBusy) {
				t.Fatalf("call %d: %v", i, err)
			}
			busy++
		default:
			chans = append(chans, ch)
		}
	}
	if busy == 0 || len(chans) > 5 {
		t.Errorf("busy=%d pending=%d; want at most 2 running + 3 queued", busy, len(chans))
	}
	// Close cancels the hung and queued calls; each still gets a result.
	p.Close()
	for _, ch := range chans {
		if err := topodesctest.WaitErr(t, ch); err == nil {
			t.Error("cancelled call succeeded")
		}
	}
}
