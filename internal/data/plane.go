package data

import (
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/store/diskguard"
)

// Plane is the data plane: the topic registry and the partition logs, with
// the Kafka request handlers on top. All methods are safe for concurrent use.
type Plane struct {
	st  Store
	cfg Config
	log *slog.Logger

	adminMu sync.Mutex // serializes topic create/delete/grow (each commits with Sync)

	mu     sync.RWMutex // guards byName, byID and every topic's parts slice
	byName map[string]*topic
	byID   map[[16]byte]*topic

	pidMu    sync.Mutex
	pidNext  int64 // next producer ID to hand out
	pidLimit int64 // end of this process's reserved block (0 = none yet)

	// Dynamic broker configs (BROKER resources of IncrementalAlterConfigs):
	// dynMu serializes their changes; eff is the configuration in force
	// (cfg.Values with the dynamic configs applied).
	dynMu      sync.Mutex
	dynDefault map[string]string // cluster default (resource name "")
	dynBroker  map[string]string // this broker (resource name = node id)
	eff        atomic.Pointer[config.Values]

	groupConfigs *GroupConfigStore

	cleaner *cleaner

	// verifier is the transaction coordinator's partition verification (txn_produce.go); nil:
	// transactional batches are not verified.
	verifier TxnVerifier

	closeOnce     sync.Once
	closing       chan struct{} // closed by Close: stops the background loops
	retentionDone chan struct{} // closed when the retention loop returned
	catalogDone   chan struct{} // closed when the catalog loop returned (cluster mode)

	images imageCache // the coordinator's metadata.Image (image.go)

	// groupMetadataCodec is offsets.topic.compression.codec (AppendGroupMetadata).
	groupMetadataCodec atomic.Int32
	// groupMetadataFloor bounds what the cleaner may compact in __consumer_offsets
	// (SetGroupMetadataCleanFloor).
	groupMetadataFloor atomic.Pointer[func(partition int32) int64]

	subMu      sync.Mutex
	subs       []func(TopicChange)
	events     []TopicChange
	delivering bool
}

// Open loads the topics, high watermarks, log start offsets and idempotent
// producer state stored under the 'd' prefix of db and returns the plane,
// whose retention loop runs until Close.
// db stays owned by the caller; Close does not close it.
func Open(db *pebble.DB, cfg Config, log *slog.Logger) (*Plane, error) {
	return OpenStore(NewPebbleStore(db, cfg.Guard), cfg, log)
}

// OpenStore loads the plane from st (which stays owned by the caller) and returns it, with its
// retention loop and log cleaner running until Close.
func OpenStore(st Store, cfg Config, log *slog.Logger) (*Plane, error) {
	cfg.setDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plane{
		st:     st,
		cfg:    cfg,
		log:    log,
		byName: make(map[string]*topic),
		byID:   make(map[[16]byte]*topic),

		closing:       make(chan struct{}),
		retentionDone: make(chan struct{}),
	}
	p.eff.Store(cfg.Values)
	p.groupConfigs = newGroupConfigStore(p)
	p.cleaner = newCleaner(p)
	if err := p.loadDynamicConfigs(); err != nil {
		return nil, err
	}
	if err := p.groupConfigs.load(); err != nil {
		return nil, err
	}
	if err := p.load(); err != nil {
		return nil, err
	}
	go p.retentionLoop()
	go p.cleaner.run()
	if w, ok := st.(CatalogWatcher); ok && p.cluster() {
		p.catalogDone = make(chan struct{})
		go p.catalogLoop(w.Changed())
	}
	return p, nil
}

// Close stops the retention loop and the log cleaner and releases the plane.
// In-flight requests should have finished; the Pebble DB is not closed. Safe
// to call twice.
func (p *Plane) Close() error {
	p.closeOnce.Do(func() { close(p.closing) })
	<-p.retentionDone
	<-p.cleaner.done
	if p.catalogDone != nil {
		<-p.catalogDone
	}
	return nil
}

// storeFailed reports whether the store takes no writes at all any more (the background loops
// pause).
func (p *Plane) storeFailed() bool {
	return p.cfg.Guard.Refusing() && p.cfg.Guard.Status().State == diskguard.Failed
}

// Rack is broker.rack ("" when unset).
func (p *Plane) Rack() string { return p.cfg.Rack }

func (p *Plane) load() error {
	recs, err := p.st.Topics()
	if err != nil {
		return err
	}
	nowMs := p.cfg.Now().UnixMilli()
	for _, rec := range recs {
		t := newTopic(rec.Name, rec.ID, rec.Configs, p.effective())
		for i := int32(0); i < rec.Partitions; i++ {
			part := newPartition(t.id, i, nowMs)
			if p.cluster() {
				part.led = false // loaded by its leader (LeadPartition)
			} else if err := p.loadPartition(t, part); err != nil {
				return err
			}
			t.parts = append(t.parts, part)
		}
		p.byName[t.name] = t
		p.byID[t.id] = t
	}
	p.log.Info("data plane loaded", "topics", len(p.byName))
	return nil
}

// lookup returns the topic called name and its current partitions.
func (p *Plane) lookup(name string) (*topic, []*partition) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t := p.byName[name]
	if t == nil {
		return nil, nil
	}
	return t, t.parts
}

func (p *Plane) lookupID(id [16]byte) (*topic, []*partition) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t := p.byID[id]
	if t == nil {
		return nil, nil
	}
	return t, t.parts
}

// TopicInfo is the coordinator's view of a topic. Configs holds the topic's
// config overrides only (defaults are Kafka's); it is a copy.
type TopicInfo struct {
	ID         [16]byte
	Name       string
	Partitions int32
	Internal   bool
	Configs    map[string]string
}

// TopicChange is one topic-registry change delivered to subscribers.
type TopicChange struct {
	Created, Deleted, Resized []TopicInfo
}

func (p *Plane) infoLocked(t *topic) TopicInfo {
	cfgs := make(map[string]string, len(t.configs))
	for k, v := range t.configs {
		cfgs[k] = v
	}
	return TopicInfo{ID: t.id, Name: t.name, Partitions: int32(len(t.parts)), Internal: t.internal, Configs: cfgs}
}

// Topic returns the topic called name.
func (p *Plane) Topic(name string) (TopicInfo, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t := p.byName[name]
	if t == nil {
		return TopicInfo{}, false
	}
	return p.infoLocked(t), true
}

// TopicByID returns the topic with the given topic ID.
func (p *Plane) TopicByID(id [16]byte) (TopicInfo, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t := p.byID[id]
	if t == nil {
		return TopicInfo{}, false
	}
	return p.infoLocked(t), true
}

// Topics returns every topic, sorted by name.
func (p *Plane) Topics() []TopicInfo {
	p.mu.RLock()
	out := make([]TopicInfo, 0, len(p.byName))
	for _, t := range p.byName {
		out = append(out, p.infoLocked(t))
	}
	p.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sortedTopics returns every topic with its partitions, sorted by name.
func (p *Plane) sortedTopics() []*topic {
	p.mu.RLock()
	out := make([]*topic, 0, len(p.byName))
	for _, t := range p.byName {
		out = append(out, t)
	}
	p.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Offsets returns the log start offset and high watermark of a partition,
// for lag computations. ok is false for an unknown topic or partition, and in cluster mode
// for a partition this node does not lead.
func (p *Plane) Offsets(topicName string, partition int32) (logStart, highWatermark int64, ok bool) {
	_, parts := p.lookup(topicName)
	if partition < 0 || int(partition) >= len(parts) {
		return 0, 0, false
	}
	part := parts[partition]
	part.mu.Lock()
	defer part.mu.Unlock()
	if !part.led { // cluster mode: another node leads it, its offsets are not loaded here
		return 0, 0, false
	}
	return part.logStart, part.hw, true
}

// Subscribe registers fn, called after topics are created, deleted or grow
// partitions. Calls happen outside the plane's locks, one at a time, in the
// order the changes were committed (fn may call back into the plane).
func (p *Plane) Subscribe(fn func(TopicChange)) {
	p.subMu.Lock()
	p.subs = append(p.subs, fn)
	p.subMu.Unlock()
}

// publish queues ev (called in commit order, under adminMu).
func (p *Plane) publish(ev TopicChange) {
	p.images.version.Add(1)
	p.subMu.Lock()
	p.events = append(p.events, ev)
	p.subMu.Unlock()
}

// deliver runs queued events through the subscribers unless another
// goroutine already is (then it will pick ours up too).
func (p *Plane) deliver() {
	p.subMu.Lock()
	if p.delivering {
		p.subMu.Unlock()
		return
	}
	p.delivering = true
	for len(p.events) > 0 {
		ev := p.events[0]
		p.events = p.events[1:]
		subs := p.subs
		p.subMu.Unlock()
		for _, fn := range subs {
			fn(ev)
		}
		p.subMu.Lock()
	}
	p.events = nil
	p.delivering = false
	p.subMu.Unlock()
}
