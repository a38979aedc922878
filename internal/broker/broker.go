// Package broker assembles muster: the Pebble store shared by the data plane and the coordinator,
// the coordinator runtime, the Kafka listener and the HTTP endpoints (/healthz, /readyz,
// /metrics).
package broker

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/console"
	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/coordinator/engine"
	"github.com/muster-io/muster/internal/coordinator/txnapi"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/lag"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/security/tlsconf"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/diskguard"
)

// Options configure a broker.
type Options struct {
	// Listen is the one PLAINTEXT listener of --listen, e.g. 127.0.0.1:9092 (port 0 = any); ""
	// when the config's listeners key names the listeners (giving both is an error).
	Listen     string
	HTTPListen string // "" = no HTTP endpoints
	DataDir    string
	Config     *config.Values
	Log        *slog.Logger
	// Clock drives the coordinator (tests pass a ManualClock); nil = wall clock.
	Clock engine.Clock
	// Tools are the admin commands the web console's operator actions run (cmd/muster passes
	// its consumer-groups and streams-groups); without them the actions are refused.
	Tools console.Tools
	// Ctx, when set, cancels a start-up that waits (cluster mode: joining behind a live node of
	// the same node.id); nil = start-up is only bounded by its own timeouts.
	Ctx context.Context
}

// Broker is a running muster.
type Broker struct {
	opts    Options
	log     *slog.Logger
	db      *pebble.DB
	plane   *data.Plane
	cst     *store.Pebble // the coordinator store; closed after the runtime, before the plane
	rt      *api.Runtime
	svc     *api.Service
	srv     *server.Server
	lns     []boundListener
	httpLn  net.Listener
	httpSrv *http.Server
	reg     *prometheus.Registry
	metrics *runtimeMetrics
	// reqMetrics are Kafka's RequestMetrics; nil without an HTTP listener (nothing to serve them).
	reqMetrics *requestMetrics
	td         *api.TopologyDescriptions // KIP-1331; nil = no plugin
	lag        *lag.Monitor              // nil = lag monitoring off
	lagStop    context.CancelFunc
	console    *console.Console // nil = no web console
	// consoleReady is set once the console can serve (the HTTP listener is up before the store
	// opens; until then /ui and /api answer 503).
	consoleReady atomic.Pointer[console.Console]

	// The transaction coordinator (transactions.go).
	txnRT      *txnapi.Runtime
	txnSvc     *txnapi.Service
	txnMetrics *txnMetrics
	walFS      *store.SyncCountingFS // counts WAL fsyncs (muster_store_wal_syncs_total)

	authz       security.Authorizer          // AllowAll without authorizer.class.name
	std         *security.StandardAuthorizer // nil without authorizer.class.name
	creds       *security.ScramCredentials
	secMetrics  *securityMetrics
	tlsManagers []*tlsconf.Manager
	guard       *diskguard.Guard // free space and store health: which writes are taken
	// Cluster mode (cluster.go): nil on the embedded store.
	cl             *clusterNode
	clusterMetrics *clusterMetrics
	wg             sync.WaitGroup
	closeMu        sync.Once
	// serving is set once Start has built everything: the HTTP endpoints, up from the start
	// so that a start-up stuck on a full disk can say so, read the rest only then.
	serving atomic.Bool
	// startPhase names what start-up waits for, for /readyz (nil: opening the store).
	startPhase atomic.Pointer[string]
}

// Start opens the data dir, loads the coordinator shards in the background and starts serving.
func Start(opts Options) (*Broker, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Config == nil {
		opts.Config = config.Defaults()
	}
	if opts.Clock == nil {
		opts.Clock = engine.WallClock{}
	}
	b := &Broker{opts: opts, log: opts.Log}
	if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	v := opts.Config
	b.guard = newGuard(v, opts.DataDir, opts.Log, b.probe)
	b.guard.Start() // a disk already short of space: start degraded
	if st := b.guard.Status(); st.Total > 0 && st.Threshold >= st.Total {
		b.log.Warn("storage: the free-space threshold is larger than the data dir's file system: every write that grows the store will be refused; lower muster.storage.min.free.bytes",
			"threshold_bytes", st.Threshold, "file_system_bytes", st.Total)
	}
	b.walFS = store.NewSyncCountingFS(b.guard.FS(vfs.Default))
	b.metrics = newRuntimeMetrics(b.guard)
	b.secMetrics = newSecurityMetrics() // /metrics registers it, before the store opens
	b.txnMetrics = newTxnMetrics()
	b.clusterMetrics = newClusterMetrics()
	if opts.HTTPListen != "" {
		b.reqMetrics = newRequestMetrics()
		// Up before the store opens: Pebble flushes what its WAL holds before Open returns,
		// which waits for space on a full disk; /readyz and /metrics say so meanwhile.
		if err := b.startHTTP(); err != nil {
			b.guard.Close()
			return nil, err
		}
	}
	db, err := pebble.Open(filepath.Join(opts.DataDir, "pebble"), &pebble.Options{Logger: b.guard.PebbleLogger(),
		EventListener: b.guard.EventListener(), MemTableSize: memTableSize(b.guard.Status().Threshold),
		L0CompactionThreshold: l0CompactionThreshold, L0StopWritesThreshold: l0StopWritesThreshold, FS: b.walFS})
	if err != nil {
		b.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "lock held") {
			return nil, fmt.Errorf("data dir %s is in use by another process (its lock is held); stop that process or choose another --data-dir", opts.DataDir)
		}
		return nil, fmt.Errorf("opening the store in %s (a corrupt or unreadable data dir refuses to start): %w", opts.DataDir, err)
	}
	b.db = db
	b.guard.StartReclaimer(db)
	fail := func(err error) (*Broker, error) {
		b.Close()
		return nil, err
	}
	if v.String("cluster.store.url") != "" {
		if err := b.openCluster(v); err != nil {
			return fail(err)
		}
	}
	if err := b.setupSecurity(v); err != nil {
		return fail(err)
	}
	if b.lns, err = b.bindListeners(v); err != nil {
		return fail(err)
	}
	if b.cl != nil {
		if b.cl.inter, err = b.setupInterBroker(v); err != nil {
			return fail(err)
		}
		b.log.Info("cluster: node-to-node requests use the inter-broker listener", "listener", b.cl.inter.listener,
			"mechanism", b.cl.inter.mechanism, "user", b.cl.inter.user)
	}
	// The plane and the coordinator describe the broker by its first listener; adapters answer
	// each request with the endpoint of the listener it came in on.
	host, port := b.lns[0].l.AdvertisedHost, b.lns[0].l.AdvertisedPort
	clusterID := v.String("cluster.id")
	if b.cl != nil {
		if clusterID, err = b.sharedClusterID(clusterID); err != nil {
			return fail(err)
		}
	} else if clusterID == "" {
		sum := sha256.Sum256([]byte(filepath.Clean(opts.DataDir)))
		clusterID = base64.RawURLEncoding.EncodeToString(sum[:16])
	}
	dcfg := data.Config{
		NodeID: v.NodeID(), AdvertisedHost: host, AdvertisedPort: port, Rack: v.String("broker.rack"),
		ClusterID: clusterID, NumPartitions: int32(v.Int("num.partitions")),
		DefaultReplicationFactor: int16(v.Int("default.replication.factor")),
		AutoCreateTopics:         v.Bool("auto.create.topics.enable"), Now: opts.Clock.Now,
		RetentionCheckInterval: v.Ms("log.retention.check.interval.ms"),
		Values:                 v,
		Guard:                  b.guard,
	}
	var plane *data.Plane
	if b.cl != nil {
		// Cluster mode: topics and partition logs in the shared database, each partition led
		// by the node holding its lease (cluster.go).
		dcfg.Guard, dcfg.Leaders = nil, clusterLeaders{b}
		plane, err = data.OpenStore(b.cl.data, dcfg, opts.Log)
	} else {
		plane, err = data.Open(db, dcfg, opts.Log)
	}
	if err != nil {
		return fail(fmt.Errorf("loading partitions from %s: %w", opts.DataDir, err))
	}
	b.plane = plane
	var cst store.Store
	if b.cl != nil {
		cst = b.cl.groups // shards leased through the cluster store
	} else {
		pst, err := store.OpenPebbleGuarded(db, int32(v.Int("offsets.topic.num.partitions")), b.guard)
		if err != nil {
			return fail(fmt.Errorf("coordinator store in %s: %w", opts.DataDir, err))
		}
		// __consumer_offsets: one partition per shard, holding what the shards commit.
		offsets := &offsetsTopic{plane: plane, log: opts.Log}
		created, err := plane.EnsureGroupMetadataTopic(pst.Config().Shards, v.Int("offsets.topic.segment.bytes"),
			int16(v.Int("offsets.topic.compression.codec")))
		if err != nil {
			return fail(err)
		}
		if created {
			if err := offsets.fill(context.Background(), db, pst); err != nil {
				return fail(err)
			}
		}
		pst.SetMirror(offsets)
		plane.SetGroupMetadataCleanFloor(pst.CheckpointOffset)
		b.cst = pst
		cst = pst
	}
	ccfg := coordinator.ConfigFrom(v)
	groupConfigs := api.NewGroupConfigView(v, plane.GroupConfigs())
	offsetViews := api.NewOffsetViews(ccfg.Shards)
	b.rt = engine.New(engine.Options[*coordinator.State]{
		Shards: ccfg.Shards,
		New: func(shard int32) *coordinator.State {
			return coordinator.NewState(shard, ccfg, opts.Log, engine.RandomIDs{})
		},
		Store:      cst,
		Clock:      opts.Clock,
		Log:        opts.Log,
		QueueDepth: int(v.Int("muster.shard.queue.depth")),
		Hooks:      b.metrics.hooks(),
		Refresh:    refreshShard(plane, groupConfigs),
		Writes:     groupWrites{b.guard},
		Snapshot:   offsetViews.Snapshot,
		Managed:    b.cl != nil,
	})
	b.svc = &api.Service{RT: b.rt, Cfg: ccfg, Log: opts.Log, Topics: topics{plane},
		Self: api.Endpoint{NodeID: v.NodeID(), Host: host, Port: port}, Writes: groupWrites{b.guard}, Offsets: offsetViews}
	if b.td, err = newTopologyDescriptions(v, opts.DataDir, b); err != nil {
		return fail(err)
	}
	b.svc.TopologyDescriptions = b.td
	b.svc.ShareLog = plane
	plane.Subscribe(b.onTopicChange)
	b.rt.Start()
	if err := b.startTransactions(v); err != nil {
		return fail(err)
	}
	if b.cl != nil {
		if err := b.startCluster(v); err != nil {
			return fail(err)
		}
	}
	if b.td != nil {
		b.td.StartCleanup(b.svc, ccfg.Offsets.RetentionCheck)
	}

	sopts := server.Options{
		MaxRequestBytes:  int32(v.Int("socket.request.max.bytes")),
		MaxConnections:   int(v.Int("muster.max.connections")),
		MaxInflightBytes: v.Int("muster.connection.max.inflight.bytes"),
		IdleTimeout:      idleTimeout(v.Int("connections.max.idle.ms")),
		ClusterID:        clusterID,
		NodeID:           v.NodeID(),
	}
	if b.reqMetrics != nil {
		sopts.Observer = b.reqMetrics
	}
	b.srv = server.New(sopts, opts.Log)
	if b.lag, err = b.newLagMonitor(); err != nil {
		return fail(err)
	}
	b.registerHandlers()
	if b.lag != nil {
		b.runLag()
	}
	for _, bl := range b.lns {
		b.wg.Add(1)
		go func(bl boundListener) {
			defer b.wg.Done()
			if err := b.srv.ServeListener(bl.ln, bl.l); err != nil {
				b.log.Error("kafka listener stopped", "listener", bl.l.Name, "err", err)
			}
		}(bl)
	}
	b.startConsole()
	b.serving.Store(true)
	for _, k := range []string{"log.dirs", "log.dir"} {
		if v.IsSet(k) {
			b.log.Warn("config key accepted for compatibility but not used", "key", k, "instead", "--data-dir")
		}
	}
	for _, bl := range b.lns {
		b.log.Info("kafka listener", "name", bl.l.Name, "protocol", bl.l.Protocol, "bound", bl.ln.Addr().String(),
			"advertised", net.JoinHostPort(bl.l.AdvertisedHost, strconv.Itoa(int(bl.l.AdvertisedPort))))
	}
	b.log.Info("muster serving", "kafka", b.Addr(), "advertised", net.JoinHostPort(host, strconv.Itoa(int(port))),
		"http", opts.HTTPListen, "data_dir", opts.DataDir, "shards", ccfg.Shards, "storage", b.guard.Status().State.String())
	return b, nil
}

// advertised picks the host:port clients should use: advertised.listeners' first PLAINTEXT
// entry, else the bound listener address.
func advertised(v *config.Values, bound string) (string, int32, error) {
	addr := bound
	if al := v.String("advertised.listeners"); al != "" {
		first := strings.Split(al, ",")[0]
		if i := strings.Index(first, "://"); i >= 0 {
			first = first[i+3:]
		}
		addr = first
	}
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("advertised.listeners %q: %w", addr, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("advertised.listeners %q: bad port", addr)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return host, int32(port), nil
}

// Addr is the first Kafka listener's bound address.
func (b *Broker) Addr() string { return b.lns[0].ln.Addr().String() }

// ListenerAddr is the bound address of the listener called name ("" if none).
func (b *Broker) ListenerAddr(name string) string {
	for _, bl := range b.lns {
		if bl.l.Name == strings.ToUpper(name) {
			return bl.ln.Addr().String()
		}
	}
	return ""
}

// Authorizer is the ACL authorizer (nil without authorizer.class.name).
func (b *Broker) Authorizer() *security.StandardAuthorizer { return b.std }

// ScramCredentials are the broker's SCRAM credentials.
func (b *Broker) ScramCredentials() *security.ScramCredentials { return b.creds }

// idleTimeout maps connections.max.idle.ms to the server's idle timeout (-1: never).
func idleTimeout(ms int64) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// HTTPAddr is the HTTP listener's address ("" if none).
func (b *Broker) HTTPAddr() string {
	if b.httpLn == nil {
		return ""
	}
	return b.httpLn.Addr().String()
}

// Runtime exposes the coordinator runtime (tests).
func (b *Broker) Runtime() *api.Runtime { return b.rt }

// Coordinator exposes the group coordinator's adapters (tests).
func (b *Broker) Coordinator() *api.Service { return b.svc }

// Lag is the lag monitor (nil when muster.lag.enable is false).
func (b *Broker) Lag() *lag.Monitor { return b.lag }

// Transactions exposes the transaction coordinator's adapters (tests).
func (b *Broker) Transactions() *txnapi.Service { return b.txnSvc }

// Plane exposes the data plane (tests).
func (b *Broker) Plane() *data.Plane { return b.plane }

// Guard exposes the disk guard (tests).
func (b *Broker) Guard() *diskguard.Guard { return b.guard }

// GroupConfigs is the durable store of group configs (GROUP resources of
// IncrementalAlterConfigs), which the group coordinator reads.
func (b *Broker) GroupConfigs() config.GroupConfigs { return b.plane.GroupConfigs() }

// WaitReady blocks until every shard (of the group and the transaction coordinators) is loaded
// (cluster mode: every shard this node holds, after its first balancing round) or ctx ends.
func (b *Broker) WaitReady(ctx context.Context) error {
	for ok, _ := b.clusterReadiness(); !b.rt.Ready() || !b.txnRT.Ready() || !ok; ok, _ = b.clusterReadiness() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// Close stops the listeners, drains the coordinator (in-flight batches commit) and closes the
// store. SIGTERM runs this; SIGKILL loses nothing acknowledged because acknowledgements follow
// fsync. A failed store (diskguard.Failed) is left unclosed: its WAL cannot be closed cleanly
// and a Pebble goroutine may be parked holding its lock; the next start recovers from the
// files, which hold every acknowledged write.
func (b *Broker) Close() error {
	var err error
	b.closeMu.Do(func() {
		res := make(chan error, 1)
		go func() { res <- b.close() }()
		// A failed store can leave writes blocked inside Pebble for good (a fatal commit error
		// parks the goroutine that holds its commit pipeline, see diskguard.Logger): waiting
		// for them would keep the process from exiting. Past failedStoreCloseWait with the
		// store failed, Close gives up on them; the next start recovers every acknowledged
		// write from the WAL.
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var failedSince time.Time
		for {
			select {
			case err = <-res:
				return
			case now := <-tick.C:
				if b.guard.Status().State != diskguard.Failed {
					failedSince = time.Time{}
					continue
				}
				if failedSince.IsZero() {
					failedSince = now
				}
				if now.Sub(failedSince) >= failedStoreCloseWait {
					b.log.Warn("storage: the store failed and writes are stuck in it; exiting without waiting for them (the next start recovers every acknowledged write from its WAL)",
						"waited", failedStoreCloseWait)
					err = errors.New("shutdown abandoned writes stuck in the failed store")
					return
				}
			}
		}
	})
	return err
}

// failedStoreCloseWait is how long Close waits for the node's goroutines once the store has
// failed.
const failedStoreCloseWait = 5 * time.Second

// close stops the node: listeners and connections, then the coordinators, the stores and the
// data plane.
func (b *Broker) close() (err error) {
	b.drainCluster() // cluster mode: hand every shard over while still serving
	if b.console != nil {
		b.console.Close()
	}
	if b.httpSrv != nil {
		b.httpSrv.Close()
	}
	if b.srv != nil {
		b.srv.Close()
	} else {
		for _, bl := range b.lns {
			bl.ln.Close()
		}
	}
	if b.lagStop != nil {
		b.lagStop()
	}
	b.wg.Wait()
	for _, m := range b.tlsManagers {
		m.Close()
	}
	b.stopTopologyDescriptionCleanup()
	b.closeTransactions()
	if b.rt != nil {
		b.rt.Close()
	}
	if b.plane != nil && b.cl != nil {
		b.plane.Close() // before the cluster store it writes to
	}
	if b.cst != nil {
		if cerr := b.cst.Close(); cerr != nil {
			b.log.Warn("coordinator store: last checkpoint failed (the next start reads the records from __consumer_offsets)", "err", cerr)
		}
	}
	b.closeCluster()
	b.closeTopologyDescriptionPlugin()
	if b.plane != nil {
		b.plane.Close()
	}
	b.guard.Close()
	if b.db != nil {
		if st := b.guard.Status(); st.State == diskguard.Failed {
			b.log.Warn("storage: the store failed; exiting without closing it (the next start recovers every acknowledged write from its WAL)", "reason", st.Reason)
		} else {
			err = b.db.Close()
		}
	}
	return err
}

// onTopicChange tells the coordinator about deleted topics (admin requests): their committed
// offsets are deleted before the request answers. Every other topic change reaches each shard
// as a new metadata image before its next operation.
func (b *Broker) onTopicChange(ev data.TopicChange) {
	if len(ev.Deleted) == 0 {
		return
	}
	deleted := make([]string, 0, len(ev.Deleted))
	for _, t := range ev.Deleted {
		deleted = append(deleted, t.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.svc.OnTopicsDeleted(ctx, deleted)
}
