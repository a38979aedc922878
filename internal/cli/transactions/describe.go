package transactions

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/muster-io/muster/internal/cli/clikit"
)

func describeFlags(f *pflag.FlagSet, o *options) {
	strFlag(f, &o.transactionalID, "transactional-id", "Transactional id.")
}

// describedTxn is describe's output.
type describedTxn struct {
	CoordinatorID   int32    `json:"coordinatorId"`
	TransactionalID string   `json:"transactionalId"`
	ProducerID      int64    `json:"producerId"`
	ProducerEpoch   int16    `json:"producerEpoch"`
	State           string   `json:"transactionState"`
	TimeoutMs       int32    `json:"transactionTimeoutMs"`
	StartTimeMs     *int64   `json:"currentTransactionStartTimeMs"`
	DurationMs      *int64   `json:"transactionDurationMs"`
	TopicPartitions []string `json:"topicPartitions"`
}

// runDescribe describes one transactional id (DescribeTransactions to its coordinator; Kafka's
// DescribeTransactionsCommand).
func runDescribe(ctx context.Context, a *clikit.Admin, o *options, e env, out io.Writer) error {
	if o.transactionalID == "" {
		return clikit.Usagef("Missing required argument \"[transactional-id]\"")
	}
	cctx, cancel := timeout(ctx, a)
	defer cancel()
	ds, err := a.Adm.DescribeTransactions(cctx, o.transactionalID)
	d, ok := ds[o.transactionalID]
	if err == nil && !ok {
		err = fmt.Errorf("no answer for %s", o.transactionalID)
	}
	if err == nil {
		err = d.Err
	}
	if err != nil {
		return errorf("Failed to describe transaction state of transactional-id `%s`: %v", o.transactionalID, err)
	}
	r := describedTxn{CoordinatorID: d.Coordinator, TransactionalID: d.TxnID, ProducerID: d.ProducerID, ProducerEpoch: d.ProducerEpoch,
		State: d.State, TimeoutMs: d.TimeoutMillis, TopicPartitions: []string{}}
	if d.StartTimestamp >= 0 {
		start, dur := d.StartTimestamp, nowMs(e)-d.StartTimestamp
		r.StartTimeMs, r.DurationMs = &start, &dur
	}
	for t, ps := range d.Topics {
		for p := range ps {
			r.TopicPartitions = append(r.TopicPartitions, t+"-"+strconv.Itoa(int(p)))
		}
	}
	sort.Strings(r.TopicPartitions)
	if o.output == "json" {
		return writeJSON(out, r)
	}
	opt := func(v *int64) string {
		if v == nil {
			return "None"
		}
		return strconv.FormatInt(*v, 10)
	}
	printTable(out, []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"},
		[][]string{{strconv.Itoa(int(r.CoordinatorID)), r.TransactionalID, strconv.FormatInt(r.ProducerID, 10),
			strconv.Itoa(int(r.ProducerEpoch)), r.State, strconv.Itoa(int(r.TimeoutMs)), opt(r.StartTimeMs), opt(r.DurationMs),
			strings.Join(r.TopicPartitions, ",")}})
	return nil
}

// errorf is a runtime failure with Kafka's message.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
