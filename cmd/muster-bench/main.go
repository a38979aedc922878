// Command muster-bench benchmarks muster against kfake (franz-go's in-memory fake Kafka, run as
// its own process) with the same raw Kafka requests over loopback, and prints a table (and JSON
// with --out). It is a development tool kept apart from the product binary (cmd/muster), which
// carries no benchmark code:
//
//	go run ./cmd/muster-bench --duration 5s --out bench.json
//
// By default it builds cmd/muster and cmd/kfake-serve from the source tree it runs in (go build);
// --muster-bin and --kfake-bin take prebuilt binaries, --muster-addr and --kfake-addr running
// brokers.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/bench"
)

func main() {
	if err := benchCommand().Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "Error:", ee.msg)
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(2)
	}
}

// exitError is a failure with its process exit code: 2 for a bad invocation, 1 for a failed run.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitErr(code int, msg string) error { return &exitError{code, msg} }

func benchCommand() *cobra.Command {
	d := bench.DefaultOptions()
	var (
		o                                   = d
		out, musterBin, kfakeBin, dir, only string
		musterAddr, kfakeAddr               string
		musterHTTP                          string
		noKfake, keep                       bool
		overrides, baseline                 []string
	)
	cmd := &cobra.Command{
		Use:   "muster-bench",
		Short: "Benchmark muster against kfake (in-memory fake Kafka) with the same raw requests",
		Long: `Start a real "muster serve" (durable: every acknowledged commit is fsynced) on a fresh data dir
and a kfake broker (franz-go's in-memory fake Kafka, cmd/kfake-serve, its own process) on
loopback, drive both with the same closed-loop raw Kafka requests and print a table (and JSON
with --out). Workloads: ` + fmt.Sprint(bench.AllWorkloads) + `.
The request workloads use --client raw (synchronous TCP, kmsg framing: cheap, default) or kgo
(a franz-go client per connection). shard-load (muster's memory per offset/member/group and its
restart time) runs last and restarts the muster child.
Every case is bounded by --duration and --max-requests; a join storm only by --duration + 30 s,
and it ends when the group has settled: Stable by ConsumerGroupDescribe / DescribeGroups, every
member at the group epoch (= the assignment epoch), a balanced split, every partition owned
once. kfake keeps state in memory and never fsyncs, so ratios to kfake compare a durable broker
with an in-memory one; the machine limit is the ApiVersions round trip and the raw append+fsync
rate of the data dir's filesystem.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if only != "" {
				o.Workloads = splitList(only)
			}
			if err := o.Validate(); err != nil {
				return exitErr(2, err.Error())
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			work := dir
			if work == "" {
				var err error
				if work, err = os.MkdirTemp("", "muster-bench-"); err != nil {
					return exitErr(1, err.Error())
				}
				if !keep {
					defer os.RemoveAll(work)
				}
			}
			o.Log = os.Stderr
			o.FsyncDir = work
			var targets []bench.Target
			if musterAddr != "" {
				targets = append(targets, bench.Target{Name: "muster", Addr: musterAddr, HTTP: musterHTTP})
			} else {
				bin := musterBin
				if bin == "" {
					var err error
					if bin, err = bench.BuildMuster(ctx, work); err != nil {
						return exitErr(1, err.Error())
					}
				}
				kvs := overrides
				if slices.Contains(o.Workloads, bench.WShardLoad) {
					kvs = append(bench.ShardLoadOverrides(), kvs...) // the user's win
				}
				if slices.Contains(o.Workloads, bench.WClassicStorm) {
					kvs = append(bench.ClassicStormOverrides(), kvs...)
				}
				if slices.Contains(o.Workloads, bench.WShareMemory) {
					kvs = append(bench.ShareOverrides(), kvs...)
				}
				p, err := bench.StartMuster(ctx, bin, filepath.Join(work, "muster-data"), overrideArgs(kvs)...)
				if err != nil {
					return exitErr(1, err.Error())
				}
				defer p.Stop()
				fmt.Fprintf(os.Stderr, "muster serve pid %d on %s (data dir %s)\n", p.Pid, p.Addr, filepath.Join(work, "muster-data"))
				targets = append(targets, p.Target)
				if len(baseline) > 0 {
					bp, err := bench.StartMusterNamed(ctx, bench.BaselineTarget, bin, filepath.Join(work, "baseline-data"), overrideArgs(append(kvs, baseline...))...)
					if err != nil {
						return exitErr(1, err.Error())
					}
					defer bp.Stop()
					fmt.Fprintf(os.Stderr, "baseline muster serve pid %d on %s (%s)\n", bp.Pid, bp.Addr, strings.Join(baseline, " "))
					targets = append(targets, bp.Target)
				}
			}
			if !noKfake {
				if kfakeAddr != "" {
					targets = append(targets, bench.Target{Name: "kfake", Addr: kfakeAddr})
				} else {
					bin := kfakeBin
					if bin == "" {
						var err error
						if bin, err = bench.BuildKfake(ctx, work); err != nil {
							return exitErr(1, err.Error())
						}
					}
					p, err := bench.StartKfake(ctx, bin)
					if err != nil {
						return exitErr(1, err.Error())
					}
					defer p.Stop()
					fmt.Fprintf(os.Stderr, "kfake pid %d on %s\n", p.Pid, p.Addr)
					targets = append(targets, p.Target)
				}
			}
			rep, err := bench.Run(ctx, o, targets, time.Now())
			if rep != nil && len(baseline) > 0 {
				rep.Baseline = strings.Join(baseline, " ")
			}
			if rep != nil {
				rep.WriteTable(os.Stdout)
				if out != "" {
					f, ferr := os.Create(out)
					if ferr != nil {
						return exitErr(1, ferr.Error())
					}
					if werr := rep.WriteJSON(f); werr != nil {
						f.Close()
						return exitErr(1, werr.Error())
					}
					if cerr := f.Close(); cerr != nil {
						return exitErr(1, cerr.Error())
					}
				}
			}
			if err != nil {
				return exitErr(1, err.Error())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", d.Duration, "timed length of each case")
	f.Int64Var(&o.MaxRequests, "max-requests", d.MaxRequests, "request bound of each case (0 = none)")
	f.IntSliceVar(&o.Conns, "conns", d.Conns, "connection counts of the request workloads")
	f.IntSliceVar(&o.FetchConns, "fetch-conns", d.FetchConns, "connection counts of fetch-all")
	f.IntVar(&o.CommitBatch, "commit-batch", d.CommitBatch, "partitions per request of commit-batch")
	f.IntVar(&o.FetchPartitions, "fetch-partitions", d.FetchPartitions, "committed partitions of the group fetch-all reads")
	f.IntVar(&o.RecordBytes, "record-bytes", d.RecordBytes, "record value size of produce")
	f.Int64Var(&o.ProduceBytes, "produce-bytes", d.ProduceBytes, "bound on bytes produced per produce case (0 = none)")
	f.IntSliceVar(&o.Producers, "producers", d.Producers, "producer counts of produce (one partition each)")
	f.IntSliceVar(&o.StormMembers, "storm-members", d.StormMembers, "member counts of the scaled join storms (cg-join-storm, classic-join-storm)")
	f.Int32Var(&o.StormPartitions, "storm-partitions", d.StormPartitions, "partitions of the topic the scaled join storms subscribe to")
	f.IntVar(&o.StormConns, "storm-conns", d.StormConns, "connections the KIP-848 join storm multiplexes its members over (at most)")
	f.DurationVar(&o.ClassicHeartbeat, "classic-heartbeat", d.ClassicHeartbeat, "heartbeat interval of classic-join-storm members that have their assignment")
	f.IntSliceVar(&o.HBGroups, "hb-groups", d.HBGroups, "group counts cg-heartbeat spreads its members over")
	f.IntVar(&o.HBMembers, "hb-members", d.HBMembers, "members of cg-heartbeat, multiplexed over the connections (0 = one per connection)")
	f.IntVar(&o.LoadOffsets, "load-offsets", d.LoadOffsets, "shard-load: committed offsets to seed (1000 partitions per group; 0 = skip)")
	f.IntVar(&o.LoadMembers, "load-members", d.LoadMembers, "shard-load: KIP-848 members to join (10 per group; 0 = skip)")
	f.IntVar(&o.LoadGroups, "load-groups", d.LoadGroups, "shard-load: empty groups to create (a member joins and leaves; 0 = skip)")
	f.DurationVar(&o.LoadSettle, "load-settle", d.LoadSettle, "shard-load: wait this long after seeding the offsets and read the memory again (offsets-settled; 0 = no second reading)")
	f.IntSliceVar(&o.TxnConns, "txn-conns", d.TxnConns, "transactional clients of txn-1 and txn-10")
	f.Int64Var(&o.IsolationBytes, "isolation-bytes", d.IsolationBytes, "fetch-isolation: bytes of transactions written, then read back")
	f.IntVar(&o.RecoverTxns, "recover-txns", d.RecoverTxns, "txn-recover: open transactions left behind before SIGKILL")
	f.IntVar(&o.RecoverConns, "recover-conns", d.RecoverConns, "txn-recover: connections opening them")
	f.IntVar(&o.ShareRecords, "share-records", d.ShareRecords, "records the share workloads consume per case")
	f.IntVar(&o.ShareBatch, "share-batch", d.ShareBatch, "records a share consumer fetches at most per request")
	f.IntSliceVar(&o.ShareConsumers, "share-consumers", d.ShareConsumers, "share consumer counts of share and share-kgo (one partition)")
	f.IntVar(&o.ShareMemoryRecords, "share-memory-records", d.ShareMemoryRecords, "share-memory: records held in flight")
	f.StringVar(&o.Client, "client", d.Client, "load generator of the request workloads: raw (synchronous TCP, kmsg framing) or kgo (franz-go client per connection)")
	f.StringVar(&only, "workloads", "", "comma-separated workloads to run (default all)")
	f.StringVar(&out, "out", "", "write the JSON report to this file")
	f.StringVar(&musterBin, "muster-bin", "", "muster binary to run as the server (default: go build ./cmd/muster; needs the source tree)")
	f.StringVar(&kfakeBin, "kfake-bin", "", "kfake-serve binary (default: go build ./cmd/kfake-serve; needs the source tree)")
	f.StringVar(&musterAddr, "muster-addr", "", "bench an already running muster at host:port instead of starting one")
	f.StringVar(&musterHTTP, "muster-http", "", "the HTTP address (host:port) of the muster at --muster-addr: its /metrics (CPU per request, records per fsync) and memory")
	f.StringVar(&kfakeAddr, "kfake-addr", "", "bench an already running kfake at host:port instead of starting one")
	f.BoolVar(&noKfake, "no-kfake", false, "bench muster only")
	f.StringVar(&dir, "dir", "", "work dir for the data dir, the fsync probe and binaries (default: a fresh temp dir)")
	f.BoolVar(&keep, "keep", false, "keep the temp work dir")
	f.StringArrayVar(&overrides, "override", nil, "broker config override key=value passed to muster serve (repeatable)")
	f.StringArrayVar(&baseline, "baseline-override", nil, "start a second muster (\"baseline\") with these overrides on top of --override and measure it case by case next to muster (repeatable), e.g. to price a feature: --baseline-override muster.lag.enable=false")
	return cmd
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item != "" {
			out = append(out, item)
		}
	}
	return out
}

func overrideArgs(kvs []string) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, "--override", kv)
	}
	return out
}
