package transactions

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/cli/clikit"
)

func producerFlags(f *pflag.FlagSet, o *options) {
	strFlag(f, &o.topic, "topic", "Topic name.")
	int32Flag(f, &o.partition, "partition", "Partition number.")
	int32Flag(f, &o.brokerID, "broker-id", "Optional broker id to describe the producer state on a specific replica.")
}

// producerRow is one producer of describe-producers.
type producerRow struct {
	ProducerID             int64  `json:"producerId"`
	ProducerEpoch          int32  `json:"producerEpoch"`
	LatestCoordinatorEpoch int32  `json:"latestCoordinatorEpoch"`
	LastSequence           int32  `json:"lastSequence"`
	LastTimestamp          int64  `json:"lastTimestamp"`
	CurrentTxnStartOffset  *int64 `json:"currentTransactionStartOffset"`
}

// runDescribeProducers describes the active producers of one partition (DescribeProducers to
// its leader; Kafka's DescribeProducersCommand).
func runDescribeProducers(ctx context.Context, a *clikit.Admin, o *options, e env, out io.Writer) error {
	if o.topic == "" || !o.changed("partition") {
		return clikit.Usagef("describe-producers needs --topic and --partition")
	}
	ps, err := describeProducers(ctx, a, map[string][]int32{o.topic: {o.partition}})
	if err == nil {
		err = ps[topicPartition{o.topic, o.partition}].Err
	}
	if err != nil {
		return errorf("Failed to describe producers for partition %s-%d on leader: %v", o.topic, o.partition, err)
	}
	var rows []producerRow
	for _, p := range ps[topicPartition{o.topic, o.partition}].ActiveProducers.Sorted() {
		r := producerRow{ProducerID: p.ProducerID, ProducerEpoch: int32(p.ProducerEpoch), LatestCoordinatorEpoch: p.CoordinatorEpoch,
			LastSequence: p.LastSequence, LastTimestamp: p.LastTimestamp}
		if p.CurrentTxnStartOffset >= 0 {
			off := p.CurrentTxnStartOffset
			r.CurrentTxnStartOffset = &off
		}
		rows = append(rows, r)
	}
	if o.output == "json" {
		if rows == nil {
			rows = []producerRow{}
		}
		return writeJSON(out, struct {
			Producers []producerRow `json:"producers"`
		}{rows})
	}
	var table [][]string
	for _, r := range rows {
		start := "None"
		if r.CurrentTxnStartOffset != nil {
			start = strconv.FormatInt(*r.CurrentTxnStartOffset, 10)
		}
		table = append(table, []string{strconv.FormatInt(r.ProducerID, 10), strconv.Itoa(int(r.ProducerEpoch)),
			strconv.Itoa(int(r.LatestCoordinatorEpoch)), strconv.Itoa(int(r.LastSequence)), strconv.FormatInt(r.LastTimestamp, 10), start})
	}
	printTable(out, []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp", "CurrentTransactionStartOffset"}, table)
	return nil
}

type topicPartition struct {
	topic     string
	partition int32
}

// describeProducers describes the producers of partitions (on their leaders).
func describeProducers(ctx context.Context, a *clikit.Admin, parts map[string][]int32) (map[topicPartition]kadm.DescribedProducersPartition, error) {
	cctx, cancel := timeout(ctx, a)
	defer cancel()
	set := kadm.TopicsSet{}
	for t, ps := range parts {
		set.Add(t, ps...)
	}
	got, err := a.Adm.DescribeProducers(cctx, set)
	if err != nil {
		return nil, err
	}
	out := map[topicPartition]kadm.DescribedProducersPartition{}
	got.EachPartition(func(d kadm.DescribedProducersPartition) {
		out[topicPartition{d.Topic, d.Partition}] = d
	})
	for t, ps := range parts {
		for _, p := range ps {
			if _, ok := out[topicPartition{t, p}]; !ok {
				return nil, fmt.Errorf("no answer for %s-%d", t, p)
			}
		}
	}
	return out, nil
}
