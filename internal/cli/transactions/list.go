package transactions

import (
	"context"
	"io"
	"sort"
	"strconv"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
)

func listFlags(f *pflag.FlagSet, o *options) {
	int64Flag(f, &o.durationFilter, "duration-filter", -1, "Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned.")
}

// listedTxn is one row of list.
type listedTxn struct {
	TransactionalID string `json:"transactionalId"`
	Coordinator     int32  `json:"coordinator"`
	ProducerID      int64  `json:"producerId"`
	State           string `json:"transactionState"`
}

// runList lists the transactions of every broker (ListTransactions v1 to each, with the
// duration filter; Kafka's ListTransactionsCommand).
func runList(ctx context.Context, a *clikit.Admin, o *options, e env, out io.Writer) error {
	rows, err := listTransactions(ctx, a, nil, o.durationFilter)
	if err != nil {
		return errorf("Failed to list transactions: %v", err)
	}
	if o.output == "json" {
		return writeJSON(out, struct {
			Transactions []listedTxn `json:"transactions"`
		}{rows})
	}
	var table [][]string
	for _, r := range rows {
		table = append(table, []string{r.TransactionalID, strconv.Itoa(int(r.Coordinator)), strconv.FormatInt(r.ProducerID, 10), r.State})
	}
	printTable(out, []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, table)
	return nil
}

// listTransactions asks every broker for its transactions (filtered by producer ids and the
// minimum running time; -1: any), sorted by coordinator then id.
func listTransactions(ctx context.Context, a *clikit.Admin, pids []int64, durationMs int64) ([]listedTxn, error) {
	cctx, cancel := timeout(ctx, a)
	defer cancel()
	brokers, err := a.Adm.ListBrokers(cctx)
	if err != nil {
		return nil, err
	}
	var out []listedTxn
	for _, b := range brokers {
		req := kmsg.NewPtrListTransactionsRequest()
		req.ProducerIDFilters, req.DurationFilterMillis = pids, durationMs
		resp, err := req.RequestWith(cctx, a.Kcl.Broker(int(b.NodeID)))
		if err != nil {
			return nil, err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, err
		}
		for _, s := range resp.TransactionStates {
			out = append(out, listedTxn{TransactionalID: s.TransactionalID, Coordinator: b.NodeID, ProducerID: s.ProducerID, State: s.TransactionState})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Coordinator != out[j].Coordinator {
			return out[i].Coordinator < out[j].Coordinator
		}
		return out[i].TransactionalID < out[j].TransactionalID
	})
	return out, nil
}
