package broker

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cluster"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/coordinator/api"
	"github.com/muster-io/muster/internal/data"
	"github.com/muster-io/muster/internal/data/pgstore"
	"github.com/muster-io/muster/internal/server"
	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/postgres"
)

// Cluster mode (cluster.store.url): the node shares its group coordinator, ACLs and SCRAM
// credentials with the other nodes through PostgreSQL. The coordinator's shards are leased:
// the runtime runs managed (engine.Options.Managed) and the lease manager (internal/cluster)
// hands it the shards of this node's fair share; FindCoordinator names the owner of the others
// and Metadata lists every live node.

// groupKind is the lease kind of the group coordinator's shards.
const groupKind = "group"

// partitionKindPrefix starts the lease kinds of topics' partitions (postgres.PartitionLeaseKind).
const partitionKindPrefix = "partition:"

// clusterNode is this node's part in a cluster.
type clusterNode struct {
	db     *postgres.DB
	me     postgres.Me
	node   postgres.Node
	prev   int64
	ttl    time.Duration
	groups *postgres.Coordinator
	// data is the data plane's store: topics and partition logs.
	data *pgstore.Store
	// partKinds are the lease kinds of the topics' partitions, by topic id (partitionKinds).
	partMu    sync.Mutex
	partKinds map[[16]byte]cluster.Kind
	// kinds are the other coordinators whose shards are leased (the transaction coordinator:
	// clusterCoordinator, before startCluster).
	kinds   []cluster.Kind
	mgr     *cluster.Manager
	markers *clusterMarkers // transaction markers for other nodes
	inter   *interBroker    // how node-to-node requests reach the other nodes
	metrics *clusterMetrics
	stop    context.CancelFunc // ends the security reloads
	stopped chan struct{}
}

// incarnationFile keeps this node's last incarnation in its data dir: a restart on the same
// data dir (whose lock proves the previous run dead) takes the previous registration over
// without waiting for it to expire.
const incarnationFile = "cluster.incarnation"

// openCluster connects to the shared database (creating or migrating its schema) and records
// this run's incarnation. The registration itself waits for startCluster, once the listeners
// are bound.
func (b *Broker) openCluster(v *config.Values) error {
	url := v.String("cluster.store.url")
	c := &clusterNode{ttl: time.Duration(v.Int("cluster.lease.ttl.ms")) * time.Millisecond, metrics: b.clusterMetrics}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, url, postgres.Options{Observe: c.metrics.observeSQL})
	if err != nil {
		return fmt.Errorf("cluster store %s: %w", redactURL(url), err)
	}
	c.db = db
	path := filepath.Join(b.opts.DataDir, incarnationFile)
	if raw, err := os.ReadFile(path); err == nil {
		c.prev, _ = strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	}
	inc := time.Now().UnixNano()
	if inc <= c.prev {
		inc = c.prev + 1
	}
	if err := os.WriteFile(path, []byte(strconv.FormatInt(inc, 10)+"\n"), 0o644); err != nil {
		db.Close()
		return fmt.Errorf("data dir: %w", err)
	}
	c.me = postgres.Me{ID: v.NodeID(), Incarnation: inc}
	c.groups, err = db.OpenCoordinator(ctx, groupKind, int32(v.Int("offsets.topic.num.partitions")), c.me, "offsets.topic.num.partitions")
	if err != nil {
		db.Close()
		return err
	}
	c.data = pgstore.Open(db, pgstore.Options{Log: b.log})
	c.partKinds = map[[16]byte]cluster.Kind{}
	b.cl = c
	return nil
}

// sharedClusterID returns the cluster's id, the same on every node (clients check it in
// ApiVersions and Metadata and refuse a node of another cluster): the first node fixes it in
// the shared store, as configured (cluster.id) or random. A node configured with another id
// refuses to start.
func (b *Broker) sharedClusterID(configured string) (string, error) {
	def := configured
	if def == "" {
		var raw [16]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", err
		}
		def = base64.RawURLEncoding.EncodeToString(raw[:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := b.cl.db.ClusterValue(ctx, "cluster.id", def)
	if err != nil {
		return "", fmt.Errorf("cluster store: reading the cluster id: %w", err)
	}
	if configured != "" && configured != id {
		return "", fmt.Errorf("cluster.id %q differs from the cluster's %q (fixed by its first node)", configured, id)
	}
	return id, nil
}

// redactURL drops a password from a connection string for messages: the URL form's
// user:password@ and the keyword/value form's password=… (quoted or not).
func redactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "@"); j >= 0 {
			cred := u[i+3 : i+3+j]
			if k := strings.Index(cred, ":"); k >= 0 {
				u = u[:i+3] + cred[:k] + ":***" + u[i+3+j:]
			}
		}
	}
	return dsnPassword.ReplaceAllString(u, "${1}***")
}

// dsnPassword matches a password in a keyword/value connection string or a URL's query.
var dsnPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)`)

// startCluster registers the node with one endpoint per listener and starts the lease
// manager over the runtime.
func (b *Broker) startCluster(v *config.Values) error {
	c := b.cl
	c.node = postgres.Node{ID: c.me.ID, Incarnation: c.me.Incarnation, Rack: v.String("broker.rack")}
	for _, bl := range b.lns {
		c.node.Endpoints = append(c.node.Endpoints, postgres.Endpoint{Listener: bl.l.Name, Host: bl.l.AdvertisedHost, Port: bl.l.AdvertisedPort})
	}
	parent := b.opts.Ctx
	if parent == nil {
		parent = context.Background()
	}
	phase := fmt.Sprintf("joining the cluster as node %d (waits while another live node holds node.id %d)", c.me.ID, c.me.ID)
	b.startPhase.Store(&phase)
	ctx, cancel := context.WithTimeout(parent, 2*c.ttl+30*time.Second)
	defer cancel()
	kinds := append([]cluster.Kind{{Store: c.groups, Host: b.rt}}, c.kinds...)
	mgr, err := cluster.Start(ctx, c.db, cluster.Config{Node: c.node, PrevIncarnation: c.prev, TTL: c.ttl, Log: b.log,
		Hooks: c.metrics.hooks(), Dynamic: b.partitionKinds}, kinds...)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.mgr = mgr
	b.plane.Subscribe(func(data.TopicChange) { mgr.Poke() }) // new partitions are leased at once
	b.svc.Directory = clusterDirectory{b}
	sctx, stop := context.WithCancel(context.Background())
	c.stop, c.stopped = stop, make(chan struct{})
	go b.reloadSecurity(sctx)
	return nil
}

// reloadSecurity keeps this node's ACLs and SCRAM credentials as the shared store has them:
// at once when a node announces a change, and every postgres.SecurityReread.
func (b *Broker) reloadSecurity(ctx context.Context) {
	defer close(b.cl.stopped)
	changed := make(chan struct{}, 1)
	go b.cl.db.Listen(ctx, postgres.SecurityChannel, func(string) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	t := time.NewTicker(postgres.SecurityReread)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-t.C:
		}
		if err := b.creds.Reload(); err != nil {
			b.log.Warn("cluster: reloading SCRAM credentials", "err", err)
		}
		if b.std != nil {
			if err := b.std.Reload(); err != nil {
				b.log.Warn("cluster: reloading ACLs", "err", err)
			}
		}
	}
}

// clusterCoordinator opens the cluster store of another coordinator (kind "txn": the
// transaction coordinator, shards from setting) whose runtime runs managed; serve adds the
// runtime to the leased kinds. Call before startCluster. nil on the embedded store.
func (b *Broker) clusterCoordinator(kind string, shards int32, setting string) (*postgres.Coordinator, func(cluster.Host), error) {
	if b.cl == nil {
		return nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := b.cl.db.OpenCoordinator(ctx, kind, shards, b.cl.me, setting)
	if err != nil {
		return nil, nil, err
	}
	return c, func(h cluster.Host) { b.cl.kinds = append(b.cl.kinds, cluster.Kind{Store: c, Host: h}) }, nil
}

// clusterOwner returns the node serving shard of kind and its endpoint on its first listener
// (false: no node holds it now, or not cluster mode): the directory of FindCoordinator.
func (b *Broker) clusterOwner(kind string, shard int32) (api.Endpoint, bool) {
	if b.cl == nil || b.cl.mgr == nil {
		return api.Endpoint{}, false
	}
	n, ok := b.cl.mgr.Owner(kind, shard)
	if !ok || len(n.Endpoints) == 0 {
		return api.Endpoint{}, false
	}
	e := n.Endpoints[0]
	return api.Endpoint{NodeID: n.ID, Host: e.Host, Port: e.Port}, true
}

// drainCluster hands every shard over before the node stops (SIGTERM).
func (b *Broker) drainCluster() {
	if b.cl == nil || b.cl.mgr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*b.cl.ttl+10*time.Second)
	defer cancel()
	b.cl.mgr.Drain(ctx)
}

// closeCluster closes the database pool (after the runtime closed).
func (b *Broker) closeCluster() {
	if b.cl == nil {
		return
	}
	if b.cl.stop != nil {
		b.cl.stop()
		<-b.cl.stopped
	}
	if b.cl.markers != nil {
		b.cl.markers.close()
	}
	if b.cl.mgr != nil {
		b.cl.mgr.Close()
	}
	b.cl.data.Close()
	b.cl.db.Close()
}

// partitionKinds lists one lease kind per topic, a shard per partition, served by the data
// plane (the lease manager's dynamic kinds).
func (b *Broker) partitionKinds() []cluster.Kind {
	c := b.cl
	topics := b.plane.Topics()
	c.partMu.Lock()
	defer c.partMu.Unlock()
	seen := make(map[[16]byte]bool, len(topics))
	out := make([]cluster.Kind, 0, len(topics))
	for _, t := range topics {
		seen[t.ID] = true
		k, ok := c.partKinds[t.ID]
		if !ok || k.Store.Config().Shards != t.Partitions {
			k = cluster.Kind{Store: c.db.Leases(postgres.PartitionLeaseKind(t.ID), t.Partitions, c.me),
				Host: partitionHost{p: b.plane, topic: t.ID}}
			c.partKinds[t.ID] = k
		}
		out = append(out, k)
	}
	for id := range c.partKinds {
		if !seen[id] {
			delete(c.partKinds, id)
		}
	}
	return out
}

// partitionHost serves the partitions of one topic whose leases this node holds: the data plane
// leads them under the lease's epoch.
type partitionHost struct {
	p     *data.Plane
	topic [16]byte
}

func (h partitionHost) Serve(l store.Shard) {
	h.p.LeadPartition(h.topic, l.ID(), int32(l.Epoch()), l.Lost())
}

func (h partitionHost) Unserve(ctx context.Context, shard int32) error {
	return h.p.UnleadPartition(ctx, h.topic, shard)
}

func (h partitionHost) Active(shard int32) bool { return h.p.Leading(h.topic, shard) }

// clusterLeaders is the lease manager's view of partition leadership, for the data plane.
type clusterLeaders struct{ b *Broker }

func (l clusterLeaders) Leader(topic [16]byte, index int32) (int32, int32, bool) {
	if l.b.cl == nil || l.b.cl.mgr == nil {
		return -1, -1, false
	}
	node, epoch, ok := l.b.cl.mgr.Lease(postgres.PartitionLeaseKind(topic), index)
	return node, int32(epoch), ok
}

func (l clusterLeaders) Fenced(topic [16]byte, index int32, epoch int32) {
	if l.b.cl != nil && l.b.cl.mgr != nil {
		l.b.cl.mgr.Fenced(postgres.PartitionLeaseKind(topic), index, int64(epoch))
	}
}

// clusterDirectory answers FindCoordinator for shards served by other nodes.
type clusterDirectory struct{ b *Broker }

func (d clusterDirectory) Coordinator(shard int32) (api.Endpoint, bool) {
	return d.b.clusterOwner(groupKind, shard)
}

// endpointOn returns node's advertised endpoint on listener l: this broker's own for itself,
// the registry's for another node. ok is false for a node unknown here or without such a
// listener.
func (b *Broker) endpointOn(node int32, l *server.Listener) (string, int32, bool) {
	if node == b.opts.Config.NodeID() {
		return l.AdvertisedHost, l.AdvertisedPort, true
	}
	if b.cl == nil || b.cl.mgr == nil {
		return "", 0, false
	}
	n, ok := b.cl.mgr.Node(node)
	if !ok {
		return "", 0, false
	}
	e, ok := n.Endpoint(l.Name)
	return e.Host, e.Port, ok
}

// clusterBrokers replaces a Metadata or DescribeCluster broker list with every live node, each
// by its endpoint on the request's listener (nodes without that listener are left out).
func (b *Broker) clusterBrokers(l *server.Listener) []kmsg.MetadataResponseBroker {
	var out []kmsg.MetadataResponseBroker
	for _, n := range b.cl.mgr.Nodes() {
		host, port, ok := b.endpointOn(n.ID, l)
		if !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = n.ID, host, port
		if n.Rack != "" {
			rack := n.Rack
			mb.Rack = &rack
		}
		out = append(out, mb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// withClusterBrokers rewrites the broker list of a Metadata response in cluster mode.
func (b *Broker) withClusterBrokers(resp *kmsg.MetadataResponse, l *server.Listener) *kmsg.MetadataResponse {
	if b.cl == nil || b.cl.mgr == nil || l == nil || resp == nil {
		return resp
	}
	resp.Brokers = b.clusterBrokers(l)
	return resp
}

// withClusterNodes rewrites the broker list of a DescribeCluster response in cluster mode.
func (b *Broker) withClusterNodes(resp *kmsg.DescribeClusterResponse, l *server.Listener) *kmsg.DescribeClusterResponse {
	if b.cl == nil || b.cl.mgr == nil || l == nil || resp == nil || resp.ErrorCode != 0 {
		return resp
	}
	var out []kmsg.DescribeClusterResponseBroker
	for _, mb := range b.clusterBrokers(l) {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		out = append(out, db)
	}
	resp.Brokers = out
	return resp
}

// clusterReadiness is /readyz's cluster part: ready when the registration is live, the node has
// balanced once and every shard it holds is loaded.
func (b *Broker) clusterReadiness() (bool, string) {
	if b.cl == nil || b.cl.mgr == nil {
		return true, ""
	}
	held := b.cl.mgr.HeldCount(groupKind)
	if !b.cl.mgr.Ready() {
		return false, fmt.Sprintf("cluster node %d: registration not live or %d leased shards still loading", b.cl.me.ID, held)
	}
	msg := fmt.Sprintf("cluster node %d holds %d of %d group coordinator shard leases", b.cl.me.ID, held, b.rt.Shards())
	if b.txnRT != nil {
		msg += fmt.Sprintf(", %d of %d transaction coordinator shard leases", b.cl.mgr.HeldCount("txn"), b.txnRT.Shards())
	}
	parts := 0
	for _, t := range b.plane.Topics() {
		parts += int(t.Partitions)
	}
	msg += fmt.Sprintf(" and leads %d of %d partitions", b.cl.mgr.HeldCountPrefix(partitionKindPrefix), parts)
	return true, msg
}

// clusterMetrics count lease events and time SQL round trips.
type clusterMetrics struct {
	acquired *prometheus.CounterVec
	lost     *prometheus.CounterVec
	fenced   *prometheus.CounterVec
	takeover *prometheus.HistogramVec
	sql      *prometheus.HistogramVec
	sqlErrs  *prometheus.CounterVec
}

func newClusterMetrics() *clusterMetrics {
	return &clusterMetrics{
		acquired: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "muster", Subsystem: "cluster",
			Name: "lease_acquisitions_total", Help: "Shard leases this node acquired."}, []string{"kind"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "muster", Subsystem: "cluster",
			Name: "lease_losses_total", Help: "Shard leases this node stopped holding, by reason: released (handed over), taken (another node took it), fenced (a write was refused), renewal (the registration was not renewed in time)."}, []string{"kind", "reason"}),
		fenced: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "muster", Subsystem: "cluster",
			Name: "fencing_refusals_total", Help: "Writes refused because a newer lease epoch owns the shard."}, []string{"kind"}),
		takeover: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "muster", Subsystem: "cluster",
			Name: "lease_takeover_seconds", Help: "Time from a dead holder's registration expiry to this node's acquisition of its lease (database clock).",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}, []string{"kind"}),
		sql: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "muster", Subsystem: "cluster",
			Name: "sql_seconds", Help: "Latency of SQL round trips to the cluster store, by operation.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"op"}),
		sqlErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "muster", Subsystem: "cluster",
			Name: "sql_errors_total", Help: "SQL round trips to the cluster store that failed, by operation."}, []string{"op"}),
	}
}

func (m *clusterMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.acquired, m.lost, m.fenced, m.takeover, m.sql, m.sqlErrs)
}

func (m *clusterMetrics) observeSQL(op string, d time.Duration, err error) {
	m.sql.WithLabelValues(op).Observe(d.Seconds())
	if err != nil && !errors.Is(err, context.Canceled) {
		m.sqlErrs.WithLabelValues(op).Inc()
	}
}

func (m *clusterMetrics) hooks() cluster.Hooks {
	return cluster.Hooks{
		Acquired: func(kind string, takeover time.Duration) {
			kind = metricKind(kind)
			m.acquired.WithLabelValues(kind).Inc()
			if takeover > 0 {
				m.takeover.WithLabelValues(kind).Observe(takeover.Seconds())
			}
		},
		Lost: func(kind, reason string) {
			kind = metricKind(kind)
			m.lost.WithLabelValues(kind, reason).Inc()
			if reason == "fenced" {
				m.fenced.WithLabelValues(kind).Inc()
			}
		},
	}
}

// metricKind is a lease kind as a metric label: every topic's partition leases count under
// "partition" (one label value per topic would grow without bound).
func metricKind(kind string) string {
	if strings.HasPrefix(kind, partitionKindPrefix) {
		return "partition"
	}
	return kind
}
