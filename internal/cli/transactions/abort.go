package transactions

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

func abortFlags(f *pflag.FlagSet, o *options) {
	strFlag(f, &o.topic, "topic", "Topic name.")
	int32Flag(f, &o.partition, "partition", "Partition number.")
	int64Flag(f, &o.startOffset, "start-offset", 0, "Start offset of the transaction to abort (brokers on 3.0 and above).")
	int64Flag(f, &o.producerID, "producer-id", 0, "Producer id (brokers older than 3.0: with --producer-epoch and --coordinator-epoch).")
	int16Flag(f, &o.producerEpoch, "producer-epoch", "Producer epoch.")
	f.Int32Var(&o.coordEpoch, "coordinator-epoch", 0, "Coordinator epoch.")
}

// runAbort aborts a hanging transaction (Kafka's AbortTransactionCommand): with --start-offset
// the partition's producers are described and the one whose open transaction starts there is
// aborted; otherwise --producer-id, --producer-epoch and --coordinator-epoch name it. The abort
// is an ABORT marker written to the partition's leader (WriteTxnMarkers, KIP-664).
func runAbort(ctx context.Context, a *clikit.Admin, o *options, e env, out io.Writer) error {
	if o.topic == "" || !o.changed("partition") {
		return clikit.Usagef("abort needs --topic and --partition")
	}
	tp := fmt.Sprintf("%s-%d", o.topic, o.partition)
	m := kadm.TxnMarkers{Commit: false, Topics: kadm.TopicsSet{}}
	m.Topics.Add(o.topic, o.partition)
	switch {
	case o.changed("start-offset"):
		ps, err := describeProducers(ctx, a, map[string][]int32{o.topic: {o.partition}})
		if err == nil {
			err = ps[topicPartition{o.topic, o.partition}].Err
		}
		if err != nil {
			return errorf("Failed to validate producer state for partition %s: %v", tp, err)
		}
		found := false
		for _, p := range ps[topicPartition{o.topic, o.partition}].ActiveProducers {
			if p.CurrentTxnStartOffset == o.startOffset {
				m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch = p.ProducerID, p.ProducerEpoch, max(p.CoordinatorEpoch, 0)
				found = true
			}
		}
		if !found {
			return errorf("Could not find any open transactions starting at offset %d on partition %s", o.startOffset, tp)
		}
	case o.changed("producer-id"):
		if !o.changed("producer-epoch") {
			return clikit.Usagef("Missing required argument --producer-epoch")
		}
		if !o.changed("coordinator-epoch") {
			return clikit.Usagef("Missing required argument --coordinator-epoch")
		}
		// A transaction that hung before its first marker has coordinator epoch -1 in
		// DescribeProducers: 0 is at most any real one.
		m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch = o.producerID, o.producerEpoch, max(o.coordEpoch, 0)
	default:
		return clikit.Usagef("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) " +
			"or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
	}
	cctx, cancel := timeout(ctx, a)
	defer cancel()
	resps, err := a.Adm.WriteTxnMarkers(cctx, m)
	if err == nil {
		resps.EachPartition(func(p kadm.TxnMarkersPartitionResponse) {
			if err == nil {
				err = p.Err
			}
		})
	}
	spec := fmt.Sprintf("AbortTransactionSpec(topicPartition=%s, producerId=%d, producerEpoch=%d, coordinatorEpoch=%d)",
		tp, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch)
	if err != nil {
		return errorf("Failed to abort transaction %s: %v", spec, err)
	}
	if o.output == "json" {
		return writeJSON(out, struct {
			Aborted       string `json:"aborted"`
			ProducerID    int64  `json:"producerId"`
			ProducerEpoch int16  `json:"producerEpoch"`
			CoordEpoch    int32  `json:"coordinatorEpoch"`
		}{tp, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch})
	}
	return nil
}
