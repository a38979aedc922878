package transactions

import (
	"context"
	"io"
	"sort"
	"strconv"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

func hangingFlags(f *pflag.FlagSet, o *options) {
	int32Flag(f, &o.brokerID, "broker-id", "Broker id to search for hanging transactions.")
	int64Flag(f, &o.maxTimeoutMin, "max-transaction-timeout", 15, "Maximum transaction timeout in minutes to limit the scope of the search.")
	strFlag(f, &o.topic, "topic", "Topic name to limit search to (required if --partition is specified).")
	int32Flag(f, &o.partition, "partition", "Partition number.")
}

// hangingTxn is one row of find-hanging.
type hangingTxn struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	ProducerID       int64  `json:"producerId"`
	ProducerEpoch    int16  `json:"producerEpoch"`
	CoordinatorEpoch int32  `json:"coordinatorEpoch"`
	StartOffset      int64  `json:"startOffset"`
	LastTimestamp    int64  `json:"lastTimestamp"`
	DurationMin      int64  `json:"durationMinutes"`
}

// runFindHanging finds hanging transactions (Kafka's FindHangingTransactionsCommand): the open
// transactions of the partitions searched (a topic, a partition, or every partition on a broker)
// that have been quiet longer than --max-transaction-timeout are candidates; one is hanging when
// its producer id has no transactional id, the id cannot be described, or its ongoing
// transaction does not include the partition (the coordinator will never write its marker).
func runFindHanging(ctx context.Context, a *clikit.Admin, o *options, e env, out io.Writer) error {
	if o.topic == "" && !o.changed("broker-id") {
		return clikit.Usagef("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search")
	}
	if o.changed("partition") && o.topic == "" {
		return clikit.Usagef("The --partition argument requires --topic to be provided")
	}
	cctx, cancel := timeout(ctx, a)
	defer cancel()
	parts := map[string][]int32{}
	switch {
	case o.topic != "" && o.changed("partition"):
		parts[o.topic] = []int32{o.partition}
	default:
		md, err := a.Adm.Metadata(cctx)
		if err != nil {
			return errorf("Failed to list topics: %v", err)
		}
		for _, t := range md.Topics.Sorted() {
			if o.topic != "" && t.Topic != o.topic {
				continue
			}
			for _, p := range t.Partitions.Sorted() {
				if o.changed("broker-id") && !hasReplica(p.Replicas, o.brokerID) {
					continue
				}
				parts[t.Topic] = append(parts[t.Topic], p.Partition)
			}
		}
	}
	var candidates []hangingTxn
	if len(parts) > 0 {
		ps, err := describeProducers(ctx, a, parts)
		if err != nil {
			return errorf("Failed to describe producers for the partitions searched: %v", err)
		}
		now := nowMs(e)
		maxMs := o.maxTimeoutMin * 60_000
		for tp, d := range ps {
			if d.Err != nil {
				return errorf("Failed to describe producers for partition %s-%d: %v", tp.topic, tp.partition, d.Err)
			}
			for _, p := range d.ActiveProducers {
				if p.CurrentTxnStartOffset >= 0 && now-p.LastTimestamp > maxMs {
					candidates = append(candidates, hangingTxn{Topic: tp.topic, Partition: tp.partition, ProducerID: p.ProducerID,
						ProducerEpoch: p.ProducerEpoch, CoordinatorEpoch: p.CoordinatorEpoch, StartOffset: p.CurrentTxnStartOffset,
						LastTimestamp: p.LastTimestamp, DurationMin: (now - p.LastTimestamp) / 60_000})
				}
			}
		}
	}
	var hanging []hangingTxn
	if len(candidates) > 0 {
		pids := map[int64]bool{}
		var pidList []int64
		for _, c := range candidates {
			if !pids[c.ProducerID] {
				pids[c.ProducerID] = true
				pidList = append(pidList, c.ProducerID)
			}
		}
		listed, err := listTransactions(ctx, a, pidList, -1)
		if err != nil {
			return errorf("Failed to list transactions for %d producers: %v", len(pidList), err)
		}
		ids := map[int64]string{}
		var idList []string
		for _, l := range listed {
			if pids[l.ProducerID] {
				ids[l.ProducerID] = l.TransactionalID
				idList = append(idList, l.TransactionalID)
			}
		}
		descs := kadm.DescribedTransactions{}
		if len(idList) > 0 {
			if descs, err = a.Adm.DescribeTransactions(cctx, idList...); err != nil && len(descs) == 0 {
				return errorf("Failed to describe %d transactions: %v", len(idList), err)
			}
		}
		for _, c := range candidates {
			id, ok := ids[c.ProducerID]
			d, described := descs[id]
			switch {
			case !ok, !described, d.Err != nil:
				hanging = append(hanging, c)
			default:
				if !d.Topics.Lookup(c.Topic, c.Partition) {
					hanging = append(hanging, c)
				}
			}
		}
	}
	sort.Slice(hanging, func(i, j int) bool {
		a, b := hanging[i], hanging[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	if o.output == "json" {
		if hanging == nil {
			hanging = []hangingTxn{}
		}
		return writeJSON(out, struct {
			Hanging []hangingTxn `json:"hangingTransactions"`
		}{hanging})
	}
	var rows [][]string
	for _, h := range hanging {
		rows = append(rows, []string{h.Topic, strconv.Itoa(int(h.Partition)), strconv.FormatInt(h.ProducerID, 10),
			strconv.Itoa(int(h.ProducerEpoch)), strconv.Itoa(int(h.CoordinatorEpoch)), strconv.FormatInt(h.StartOffset, 10),
			strconv.FormatInt(h.LastTimestamp, 10), strconv.FormatInt(h.DurationMin, 10)})
	}
	printTable(out, []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset", "LastTimestamp", "Duration(min)"}, rows)
	return nil
}

func hasReplica(replicas []int32, id int32) bool {
	for _, r := range replicas {
		if r == id {
			return true
		}
	}
	return false
}
