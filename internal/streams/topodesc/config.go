package topodesc

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Broker config keys (KIP-1331 names the class key; the others are
// muster's settings for its built-in plugins).
const (
	ConfigPluginClass      = "group.streams.topology.description.plugin.class"
	ConfigMaxBytes         = "group.streams.topology.description.plugin.max.bytes"
	ConfigHTTPURL          = "group.streams.topology.description.plugin.http.url"
	ConfigHTTPTimeoutMs    = "group.streams.topology.description.plugin.http.timeout.ms"
	ConfigHTTPConcurrency  = "group.streams.topology.description.plugin.http.concurrency"
	DefaultMaxBytes        = 1 << 20
	DefaultHTTPConcurrency = 8
	DefaultDiskWorkers     = 4
	DefaultQueueSize       = 1024
)

// Config selects and configures a plugin.
type Config struct {
	// Class is "" (feature off), "memory", "disk" or "http".
	Class string
	// MaxBytes bounds a description's canonical JSON for memory and disk;
	// 0 means DefaultMaxBytes, negative means no limit.
	MaxBytes int
	// DataDir is the broker data dir; disk uses <DataDir>/topology-descriptions.
	DataDir string
	// HTTPURL is the remote store's base URL (http only).
	HTTPURL string
	// HTTPTimeout bounds each HTTP call; 0 means DefaultHTTPTimeout.
	HTTPTimeout time.Duration
	// HTTPConcurrency is the number of concurrent HTTP calls; 0 means
	// DefaultHTTPConcurrency.
	HTTPConcurrency int
	// HTTPClient overrides the HTTP client (tests); nil builds one.
	HTTPClient *http.Client
	// QueueSize bounds pending calls for disk and http (beyond it calls fail
	// with ErrBusy); 0 means DefaultQueueSize.
	QueueSize int
	// Shared is cluster mode's shared store: the "postgres" plugin runs over it, and the disk
	// plugin (one node's files) is replaced by it.
	Shared Table
}

// ParseConfig reads the plugin keys from broker properties. Unknown keys are
// ignored; malformed numbers are errors.
func ParseConfig(props map[string]string, dataDir string) (Config, error) {
	cfg := Config{
		Class:   strings.TrimSpace(props[ConfigPluginClass]),
		DataDir: dataDir,
		HTTPURL: strings.TrimSpace(props[ConfigHTTPURL]),
	}
	num := func(key string) (int, error) {
		v, ok := props[key]
		if !ok || strings.TrimSpace(v) == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("topodesc: %s: %w", key, err)
		}
		return n, nil
	}
	var err error
	if cfg.MaxBytes, err = num(ConfigMaxBytes); err != nil {
		return Config{}, err
	}
	ms, err := num(ConfigHTTPTimeoutMs)
	if err != nil {
		return Config{}, err
	}
	if ms < 0 {
		return Config{}, fmt.Errorf("topodesc: %s must not be negative", ConfigHTTPTimeoutMs)
	}
	cfg.HTTPTimeout = time.Duration(ms) * time.Millisecond
	if cfg.HTTPConcurrency, err = num(ConfigHTTPConcurrency); err != nil {
		return Config{}, err
	}
	if cfg.HTTPConcurrency < 0 {
		return Config{}, fmt.Errorf("topodesc: %s must not be negative", ConfigHTTPConcurrency)
	}
	return cfg, nil
}

// New builds the plugin named by cfg.Class: "" → (nil, nil), the feature is
// off; "memory", "disk" (needs DataDir) or "http" (needs HTTPURL), or in
// cluster mode (cfg.Shared set) "postgres", which also replaces "disk". Any
// other class is an error.
func New(cfg Config) (Plugin, error) {
	maxBytes := cfg.MaxBytes
	switch {
	case maxBytes == 0:
		maxBytes = DefaultMaxBytes
	case maxBytes < 0:
		maxBytes = 0
	}
	queue := cfg.QueueSize
	if queue <= 0 {
		queue = DefaultQueueSize
	}
	switch cfg.Class {
	case "":
		return nil, nil
	case "memory":
		return NewMemory(maxBytes), nil
	case "postgres":
		if cfg.Shared == nil {
			return nil, fmt.Errorf("topodesc: the postgres plugin needs cluster mode (cluster.store.url)")
		}
		return NewShared(cfg.Shared, maxBytes, DefaultDiskWorkers, queue), nil
	case "disk":
		if cfg.Shared != nil { // cluster mode: descriptions must outlive a coordinator's move
			return NewShared(cfg.Shared, maxBytes, DefaultDiskWorkers, queue), nil
		}
		if cfg.DataDir == "" {
			return nil, fmt.Errorf("topodesc: the disk plugin needs a data dir")
		}
		return NewDisk(filepath.Join(cfg.DataDir, DiskDirName), maxBytes, DefaultDiskWorkers, queue)
	case "http":
		if cfg.HTTPURL == "" {
			return nil, fmt.Errorf("topodesc: the http plugin needs %s", ConfigHTTPURL)
		}
		workers := cfg.HTTPConcurrency
		if workers <= 0 {
			workers = DefaultHTTPConcurrency
		}
		return NewHTTP(cfg.HTTPURL, cfg.HTTPClient, cfg.HTTPTimeout, workers, queue)
	}
	return nil, fmt.Errorf("topodesc: unknown %s %q (want memory, disk, http or, in cluster mode, postgres)", ConfigPluginClass, cfg.Class)
}
