package txnapi

import (
	"context"
	"regexp"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/coordinator/txn"
)

// DescribeTransactions serves DescribeTransactions v0 (KIP-664): each id is described by its
// shard (txn.Describe), shards in parallel, answers in request order; a shard that cannot answer
// gives its ids its error (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR).
func (s *Service) DescribeTransactions(ctx context.Context, meta coordinator.Meta, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	resp.TransactionStates = make([]kmsg.DescribeTransactionsResponseTransactionState, len(req.TransactionalIDs))
	byShard := map[int32][]int{}
	for i, id := range req.TransactionalIDs {
		sh := s.shardFor(id)
		byShard[sh] = append(byShard[sh], i)
	}
	var wg sync.WaitGroup
	for sh, idx := range byShard {
		wg.Add(1)
		go func(sh int32, idx []int) {
			defer wg.Done()
			ids := make([]string, len(idx))
			for k, i := range idx {
				ids[k] = req.TransactionalIDs[i]
			}
			out, err := doShard(ctx, s, sh, meta, txn.Describe(ids))
			for k, i := range idx {
				if err != nil || k >= len(out) {
					d := kmsg.NewDescribeTransactionsResponseTransactionState()
					d.TransactionalID, d.ErrorCode = ids[k], codeOf(err)
					resp.TransactionStates[i] = d
					continue
				}
				resp.TransactionStates[i] = out[k]
			}
		}(sh, idx)
	}
	wg.Wait()
	return resp
}

// ListTransactions serves ListTransactions v0–v2 (KIP-664, KIP-994, KIP-1152): every shard's
// transactions matching the filters, sorted by id; names that are no transaction state are
// returned in UnknownStateFilters (and match nothing), an invalid id pattern is INVALID_REGULAR_EXPRESSION,
// and a shard still loading makes the answer COORDINATOR_LOAD_IN_PROGRESS.
func (s *Service) ListTransactions(ctx context.Context, meta coordinator.Meta, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	f := txn.ListFilter{MinDuration: -1}
	if len(req.StateFilters) > 0 {
		f.States = map[txn.State]bool{}
		for _, n := range req.StateFilters {
			// Every name of Kafka's TransactionState is known (TransactionState.fromName), the
			// transient Dead and PrepareEpochFence too: they match no listed transaction.
			st, ok := txn.ParseState(n)
			if !ok {
				resp.UnknownStateFilters = append(resp.UnknownStateFilters, n)
				continue
			}
			f.States[st] = true
		}
		if len(f.States) == 0 {
			return resp // only unknown states: nothing matches
		}
	}
	if len(req.ProducerIDFilters) > 0 {
		f.ProducerIDs = map[int64]bool{}
		for _, p := range req.ProducerIDFilters {
			f.ProducerIDs[p] = true
		}
	}
	if req.Version >= 1 {
		f.MinDuration = req.DurationFilterMillis
	}
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile(*req.TransactionalIDPattern)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		f.Pattern = re
	}
	n := s.RT.Shards()
	outs := make([][]kmsg.ListTransactionsResponseTransactionState, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for sh := int32(0); sh < n; sh++ {
		wg.Add(1)
		go func(sh int32) {
			defer wg.Done()
			outs[sh], errs[sh] = doShard(ctx, s, sh, meta, txn.List(f))
		}(sh)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			resp.ErrorCode = codeOf(err)
			return resp
		}
	}
	for _, o := range outs {
		resp.TransactionStates = append(resp.TransactionStates, o...)
	}
	sort.Slice(resp.TransactionStates, func(i, j int) bool {
		return resp.TransactionStates[i].TransactionalID < resp.TransactionStates[j].TransactionalID
	})
	return resp
}

// Stats reads every shard's counters and states (metrics); shards that cannot answer are
// skipped.
func (s *Service) Stats(ctx context.Context) []txn.Stats {
	var out []txn.Stats
	for sh := int32(0); sh < s.RT.Shards(); sh++ {
		if !s.RT.Active(sh) {
			continue
		}
		if st, err := doShard(ctx, s, sh, coordinator.Meta{}, txn.ReadStats()); err == nil {
			out = append(out, st)
		}
	}
	return out
}
