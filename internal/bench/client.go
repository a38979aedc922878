package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Target is a broker under test.
type Target struct {
	Name string // "muster", "kfake"
	Addr string // host:port of its Kafka listener
	// HTTP is muster's HTTP listener (/metrics, /readyz, /debug/pprof), "" when unknown.
	HTTP string
	// Pid is the broker's process id, 0 when unknown (not started by bench).
	Pid int
	// proc is the child process when bench started it (shard-load restarts it).
	proc *Process
}

// versions pins the request versions both brokers are driven with: Kafka 4.4's, capped at
// OffsetCommit v9 and OffsetFetch v9 (v10 addresses topics by id, which the workloads do not)
// and TxnOffsetCommit v4 (v5 is transaction version 2, which muster does not serve: franz-go
// then runs version 1 transactions against both brokers, like for like), AddPartitionsToTxn v3
// (v4+ is for brokers).
func versions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(8, 9)
	v.SetMaxKeyVersion(9, 9)
	v.SetMaxKeyVersion(24, 3)
	v.SetMaxKeyVersion(28, 4)
	return v
}

// Load generators: how the request workloads talk to a target.
const (
	// ClientRaw is one TCP connection per workload connection, driven synchronously by its
	// goroutine: requests are framed with kmsg and responses read in place (rawconn.go).
	ClientRaw = "raw"
	// ClientKgo is one franz-go client per workload connection, requests through
	// kgo.Broker.Request (franz-go's per-connection goroutines and channels cost CPU).
	ClientKgo = "kgo"
)

// Clients lists the load generators.
var Clients = []string{ClientRaw, ClientKgo}

// conn is one connection to the target's (only) broker; requests go straight to that
// connection (both targets are single brokers and their own group coordinator). Exactly one of
// raw and cl is set.
type conn struct {
	raw *rawConn
	cl  *kgo.Client
	b   *kgo.Broker
}

// dial opens one request-workload connection with the given load generator (ClientRaw or
// ClientKgo; "" = ClientRaw).
func dial(addr, client string) (*conn, error) {
	if client == ClientKgo {
		return dialKgo(addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := dialRaw(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &conn{raw: r}, nil
}

// dialKgo opens one franz-go client to addr (produce/consume use it: real client behaviour).
func dialKgo(addr string, opts ...kgo.Opt) (*conn, error) {
	all := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.MaxVersions(versions()), kgo.ClientID("muster-bench"),
		kgo.SoftwareNameAndVersion("muster-bench", "1.0")}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, err
	}
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		cl.Close()
		return nil, fmt.Errorf("no seed broker for %s", addr)
	}
	return &conn{cl: cl, b: seeds[0]}, nil
}

func (c *conn) close() {
	if c.raw != nil {
		c.raw.close()
		return
	}
	c.cl.Close()
}

// do sends req at the highest version both versions() and the broker support and returns its
// response (an error code inside the response is not an error here).
func (c *conn) do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if c.raw != nil {
		return c.raw.do(ctx, req)
	}
	return c.b.Request(ctx, req)
}

// dialAll opens n connections and closes them all on error.
func dialAll(addr, client string, n int) ([]*conn, error) {
	out := make([]*conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := dial(addr, client)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func closeAll(cs []*conn) {
	for _, c := range cs {
		c.close()
	}
}

// warm runs fn on every connection until it succeeds once (connections are open, coordinator
// shards loaded, versions negotiated) or the timeout passes.
func warm(ctx context.Context, conns int, timeout time.Duration, fn op) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for w := 0; w < conns; w++ {
		for {
			_, err := fn(ctx, w, 0)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("warm-up of connection %d did not succeed within %v: %w", w, timeout, err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// apiKeys asks the target which API keys it serves.
func apiKeys(ctx context.Context, addr string) (map[int16]int16, error) {
	c, err := dial(addr, ClientRaw)
	if err != nil {
		return nil, err
	}
	defer c.close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "muster-bench", "1.0"
	r, err := c.do(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.ApiVersionsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	out := map[int16]int16{}
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = k.MaxVersion
	}
	return out, nil
}

// createTopic creates a topic (an existing one is fine).
func createTopic(ctx context.Context, addr, topic string, partitions int32) error {
	c, err := dial(addr, ClientRaw)
	if err != nil {
		return err
	}
	defer c.close()
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	r, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	for _, rt := range r.(*kmsg.CreateTopicsResponse).Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && err != kerr.TopicAlreadyExists {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	return nil
}
