package wire

// Gap is a deliberate difference between Supported and what kmsg encodes: an API muster serves
// below kmsg's newest version (Max is muster's newest), or one it does not serve (Max = -1).
// TestApiVersionsMatchKmsg fails on any other difference, so a kmsg upgrade that brings a new
// version or key fails until the version is served or written down here.
type Gap struct {
	Key    int16
	Max    int16
	Reason string
}

const (
	whyTV2        = "KIP-890 part 2 (transaction version 2) is not served: muster's transactions are version 1, and ApiVersions advertises no transaction.version feature"
	whyZK         = "ZooKeeper-mode controller-to-broker RPC; Kafka 4 brokers do not serve it"
	whyKRaft      = "KRaft controller or quorum RPC; a muster node has no KRaft quorum"
	whyShare      = "the share coordinator's persister RPC (KIP-932): a muster node keeps share-partition state in the group's own coordinator shard"
	whyOneNode    = "replica placement on one node: there is nothing to move or elect"
	whyQuota      = "client quotas are not built yet"
	whyToken      = "delegation tokens need SASL, which is not built yet"
	whyTelemetry  = "client telemetry (KIP-714) is opt-in in Kafka and not built"
	whyNotYetData = "not built yet in the data plane"
)

// Withheld lists every deliberate gap, in key order.
var Withheld = []Gap{
	{0, 11, "Produce v12 is KIP-890's transaction version 2 (a transactional produce adds its partition to the transaction) and v13 (topic ids, KIP-516) builds on it: " + whyTV2},
	{4, -1, whyZK}, // LeaderAndIsr
	{5, -1, whyZK}, // StopReplica
	{6, -1, whyZK}, // UpdateMetadata
	{7, -1, whyZK}, // ControlledShutdown
	{26, 4, "EndTxn v5 bumps the epoch per transaction: " + whyTV2},
	{27, 1, "WriteTxnMarkers v2 (KIP-1228) carries the transaction version of the markers: " + whyTV2},
	{28, 4, "TxnOffsetCommit v5 adds the offsets partition to the transaction itself: " + whyTV2},
	{34, -1, "AlterReplicaLogDirs: muster keeps every partition in one store, there are no log dirs to move between"},
	{35, -1, "DescribeLogDirs: " + whyNotYetData},
	{38, -1, whyToken},
	{39, -1, whyToken},
	{40, -1, whyToken},
	{41, -1, whyToken},
	{43, -1, whyOneNode},   // ElectLeaders
	{45, -1, whyOneNode},   // AlterPartitionAssignments
	{46, -1, whyOneNode},   // ListPartitionReassignments
	{48, -1, whyQuota},     // DescribeClientQuotas
	{49, -1, whyQuota},     // AlterClientQuotas
	{52, -1, whyKRaft},     // Vote
	{53, -1, whyKRaft},     // BeginQuorumEpoch
	{54, -1, whyKRaft},     // EndQuorumEpoch
	{55, -1, whyKRaft},     // DescribeQuorum
	{56, -1, whyKRaft},     // AlterPartition
	{57, -1, whyKRaft},     // UpdateFeatures
	{58, -1, whyKRaft},     // Envelope
	{59, -1, whyKRaft},     // FetchSnapshot
	{62, -1, whyKRaft},     // BrokerRegistration
	{63, -1, whyKRaft},     // BrokerHeartbeat
	{64, -1, whyKRaft},     // UnregisterBroker
	{67, -1, whyKRaft},     // AllocateProducerIDs
	{70, -1, whyKRaft},     // ControllerRegistration
	{71, -1, whyTelemetry}, // GetTelemetrySubscriptions
	{72, -1, whyTelemetry}, // PushTelemetry
	{73, -1, whyKRaft},     // AssignReplicasToDirs
	{74, -1, "ListConfigResources: " + whyNotYetData},
	{75, -1, "DescribeTopicPartitions: " + whyNotYetData},
	{80, -1, whyKRaft}, // AddRaftVoter
	{81, -1, whyKRaft}, // RemoveRaftVoter
	{82, -1, whyKRaft}, // UpdateRaftVoter
	{83, -1, whyShare}, // InitializeShareGroupState
	{84, -1, whyShare}, // ReadShareGroupState
	{85, -1, whyShare}, // WriteShareGroupState
	{86, -1, whyShare}, // DeleteShareGroupState
	{87, -1, whyShare}, // ReadShareGroupStateSummary
	{94, -1, whyKRaft}, // UnregisterController
}

// WithheldGap returns the written-down gap of key, if any.
func WithheldGap(key int16) (Gap, bool) {
	for _, g := range Withheld {
		if g.Key == key {
			return g, true
		}
	}
	return Gap{}, false
}
