package txn

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
)

// Records are Kafka's __transaction_state layout (TransactionLogKey / TransactionLogValue, kmsg
// TxnMetadataKey / TxnMetadataValue): key version 0 and the transactional id; value version 1
// (flexible) with the producer ids and epoch, timeout, state, partitions (null when Empty) and
// timestamps, the tagged previous/next producer ids and client transaction version, and muster's
// tag 100: the last producer epoch (int16), which Kafka does not store. A nil value is a
// tombstone (an expired id).

// tagLastProducerEpoch is muster's tagged field of TxnMetadataValue.
const tagLastProducerEpoch = 100

func txnKey(id string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.TransactionalID = id
	return k.AppendTo(nil)
}

func txnValue(m *Metadata) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = 1
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = m.ProducerID, m.ProducerEpoch, m.TimeoutMs
	v.State = kmsg.TransactionState(m.State)
	v.LastUpdateTimestamp, v.StartTimestamp = m.LastUpdateMs, m.StartMs
	v.PreviousProducerID, v.NextProducerID = m.PreviousProducerID, m.NextProducerID
	v.ClientTransactionVersion = m.ClientTransactionVersion
	if m.State != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range m.Partitions {
			if n := len(v.Topics); n > 0 && v.Topics[n-1].Topic == tp.Topic {
				v.Topics[n-1].Partitions = append(v.Topics[n-1].Partitions, tp.Partition)
				continue
			}
			v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
	}
	v.UnknownTags.Set(tagLastProducerEpoch, binary.BigEndian.AppendUint16(nil, uint16(m.LastProducerEpoch)))
	return v.AppendTo(nil)
}

// replay applies one record (Kafka's TransactionLog.readTxnRecordValue into the cache).
func (st *ShardState) replay(r coordinator.Record) error {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(r.Key); err != nil {
		return fmt.Errorf("%w: TxnMetadataKey: %v", coordinator.ErrCorruptRecord, err)
	}
	if k.Version != 0 {
		return fmt.Errorf("%w: unknown transaction log key version %d", coordinator.ErrCorruptRecord, k.Version)
	}
	if r.Value == nil {
		delete(st.Txns, k.TransactionalID)
		return nil
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(r.Value); err != nil {
		return fmt.Errorf("%w: TxnMetadataValue of %q: %v", coordinator.ErrCorruptRecord, k.TransactionalID, err)
	}
	if v.Version < 0 || v.Version > 1 || v.State < 0 || v.State > kmsg.TransactionStatePrepareEpochFence {
		return fmt.Errorf("%w: TxnMetadataValue of %q: version %d state %d", coordinator.ErrCorruptRecord, k.TransactionalID, v.Version, v.State)
	}
	m := &Metadata{ID: k.TransactionalID, ProducerID: v.ProducerID, ProducerEpoch: v.ProducerEpoch,
		PreviousProducerID: v.PreviousProducerID, NextProducerID: v.NextProducerID, LastProducerEpoch: NoProducerEpoch,
		TimeoutMs: v.TimeoutMillis, State: State(v.State), StartMs: v.StartTimestamp, LastUpdateMs: v.LastUpdateTimestamp,
		ClientTransactionVersion: v.ClientTransactionVersion}
	if v.Version == 0 {
		m.PreviousProducerID, m.NextProducerID = NoProducerID, NoProducerID
	}
	v.UnknownTags.Each(func(tag uint32, b []byte) {
		if tag == tagLastProducerEpoch && len(b) == 2 {
			m.LastProducerEpoch = int16(binary.BigEndian.Uint16(b))
		}
	})
	if m.State != Empty {
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				m.Partitions = append(m.Partitions, TopicPartition{t.Topic, p})
			}
		}
		sort.Slice(m.Partitions, func(i, j int) bool { return lessTP(m.Partitions[i], m.Partitions[j]) })
	}
	st.Txns[m.ID] = m
	return nil
}

func coordinatorTombstone(id string) coordinator.Record { return coordinator.Record{Key: txnKey(id)} }
