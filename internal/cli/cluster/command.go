// Package cluster is `muster cluster`: the state of a muster cluster as its shared PostgreSQL
// store has it. `muster cluster status` lists the nodes (registration, listeners, lease
// expiry) and which node holds each coordinator shard, under which fencing epoch.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/store/postgres"
)

// NewCommand returns the `cluster` cobra command.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Inspect a muster cluster through its shared store",
		SilenceErrors: true, SilenceUsage: true}
	cmd.AddCommand(statusCommand())
	return cmd
}

type statusOptions struct {
	store, configFile string
	shards, asJSON    bool
	timeout           time.Duration
}

func statusCommand() *cobra.Command {
	o := &statusOptions{}
	cmd := clikit.NewCommand("status", "Show the nodes of a cluster, their shards, lease epochs and expiries",
		"Reads the cluster's shared PostgreSQL store (--store, or cluster.store.url of --config) and prints every registered node "+
			"(live, draining, stopped (left gracefully) or expired (its registration lapsed), with the time its registration expires on the database's clock and one endpoint per listener) "+
			"and the coordinator shards each live node holds with their fencing epochs. --shards lists every shard. Nothing is changed.")
	f := cmd.Flags()
	f.StringVar(&o.store, "store", "", "postgres:// URL of the cluster's store")
	f.StringVar(&o.configFile, "config", "", "a node's config file: its cluster.store.url is used")
	f.BoolVar(&o.shards, "shards", false, "list every shard with its holder, epoch and acquisition time")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "time allowed to read the store")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) }
	return cmd
}

func (o *statusOptions) url() (string, error) {
	if o.store != "" {
		return o.store, nil
	}
	if o.configFile != "" {
		v, err := config.ParseFile(o.configFile, nil)
		if err != nil {
			return "", err
		}
		if u := v.String("cluster.store.url"); u != "" {
			return u, nil
		}
		return "", errors.New(o.configFile + " sets no cluster.store.url: the node runs on its embedded store")
	}
	return "", errors.New("name the cluster's store with --store postgres://... or --config FILE")
}

// Status is what `cluster status --json` prints.
type Status struct {
	Time  time.Time    `json:"time"`
	Nodes []NodeStatus `json:"nodes"`
	// Unheld lists, per kind, the shards no live node holds now.
	Unheld map[string][]int32 `json:"unheld"`
	Shards []ShardStatus      `json:"shards,omitempty"`
}

// NodeStatus is one registered node.
type NodeStatus struct {
	ID          int32               `json:"id"`
	Incarnation int64               `json:"incarnation"`
	State       string              `json:"state"` // live, draining, stopped, expired
	Rack        string              `json:"rack,omitempty"`
	Endpoints   []postgres.Endpoint `json:"endpoints"`
	StartedAt   time.Time           `json:"started_at"`
	ExpiresAt   time.Time           `json:"expires_at"`
	// Shards lists, per kind, the shards the node holds.
	Shards map[string][]int32 `json:"shards"`
}

// ShardStatus is one lease.
type ShardStatus struct {
	Kind       string    `json:"kind"`
	Shard      int32     `json:"shard"`
	Holder     int32     `json:"holder"` // -1: none
	Epoch      int64     `json:"epoch"`
	AcquiredAt time.Time `json:"acquired_at"`
}

// Build turns a store view into a Status. topics names topic ids: a topic's partition leases
// show as kind "partitions of NAME" (its shards are the partitions).
func Build(v *postgres.View, withShards bool, topics map[[16]byte]string) Status {
	st := Status{Time: v.Now, Unheld: map[string][]int32{}}
	idx := map[int32]int{}
	for _, n := range v.Nodes {
		state := "live"
		switch {
		case !n.Live && n.Draining:
			state = "stopped" // drained and deregistered: a graceful stop
		case !n.Live:
			state = "expired"
		case n.Draining:
			state = "draining"
		}
		idx[n.ID] = len(st.Nodes)
		st.Nodes = append(st.Nodes, NodeStatus{ID: n.ID, Incarnation: n.Incarnation, State: state, Rack: n.Rack,
			Endpoints: n.Endpoints, StartedAt: n.StartedAt, ExpiresAt: n.ExpiresAt, Shards: map[string][]int32{}})
	}
	for _, l := range v.Leases {
		if id, ok := postgres.TopicOfLeaseKind(l.Kind); ok {
			if name, ok := topics[id]; ok {
				l.Kind = "partitions of " + name
			}
		}
		holder := int32(-1)
		if v.Held(l) {
			holder = l.Owner
			ns := &st.Nodes[idx[l.Owner]]
			ns.Shards[l.Kind] = append(ns.Shards[l.Kind], l.Shard)
		} else {
			st.Unheld[l.Kind] = append(st.Unheld[l.Kind], l.Shard)
		}
		if withShards {
			st.Shards = append(st.Shards, ShardStatus{Kind: l.Kind, Shard: l.Shard, Holder: holder, Epoch: l.Epoch, AcquiredAt: l.AcquiredAt})
		}
	}
	return st
}

func (o *statusOptions) run(ctx context.Context, w io.Writer) error {
	url, err := o.url()
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 2, NoMigrate: true})
	if err != nil {
		return errors.New(err.Error())
	}
	defer db.Close()
	v, err := db.ReadView(ctx)
	if err != nil {
		return errors.New("reading the cluster store: " + err.Error())
	}
	names := map[[16]byte]string{}
	if ts, err := db.Topics(ctx); err == nil { // a schema before the data plane has none
		for _, t := range ts {
			names[t.ID] = t.Name
		}
	}
	st := Build(v, o.shards, names)
	if o.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	Print(w, st)
	return nil
}

// Print writes st as tables.
func Print(w io.Writer, st Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tEXPIRES IN\tRACK\tENDPOINTS\tSHARDS")
	for _, n := range st.Nodes {
		var eps []string
		for _, e := range n.Endpoints {
			eps = append(eps, fmt.Sprintf("%s://%s:%d", e.Listener, e.Host, e.Port))
		}
		var kinds []string
		for k := range n.Shards {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var shards []string
		for _, k := range kinds {
			shards = append(shards, fmt.Sprintf("%s %s", k, ranges(n.Shards[k])))
		}
		if len(shards) == 0 {
			shards = []string{"-"}
		}
		rack := n.Rack
		if rack == "" {
			rack = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", n.ID, n.State, n.ExpiresAt.Sub(st.Time).Round(time.Millisecond), rack,
			strings.Join(eps, ","), strings.Join(shards, "; "))
	}
	tw.Flush()
	var kinds []string
	for k := range st.Unheld {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "\n%s shards held by no live node: %s\n", k, ranges(st.Unheld[k]))
	}
	if len(st.Shards) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tSHARD\tHOLDER\tEPOCH\tACQUIRED")
		for _, s := range st.Shards {
			holder := "-"
			if s.Holder >= 0 {
				holder = fmt.Sprint(s.Holder)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", s.Kind, s.Shard, holder, s.Epoch, s.AcquiredAt.UTC().Format(time.RFC3339Nano))
		}
		tw.Flush()
	}
}

// ranges prints sorted shard numbers compactly: 0-3,7,9-10.
func ranges(s []int32) string {
	if len(s) == 0 {
		return "-"
	}
	s = append([]int32(nil), s...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return fmt.Sprintf("%s (%d)", strings.Join(parts, ","), len(s))
}
