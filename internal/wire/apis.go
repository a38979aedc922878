package wire

// VersionRange is an inclusive range of API versions.
type VersionRange struct{ Min, Max int16 }

// API is one entry of the supported-API table. Advertised is what ApiVersions reports; Accepted
// is what the server dispatches (it is wider where Kafka answers removed versions with
// UNSUPPORTED_VERSION in the response body rather than closing the connection, e.g.
// OffsetCommit v0–v1 per KIP-896).
type API struct {
	Key        int16
	Name       string
	Advertised VersionRange
	Accepted   VersionRange
}

// Supported is muster's table of API keys and versions. It drives ApiVersions and request
// validation alike; a key is served only if it is listed here and a handler is registered.
// Minimums follow Kafka 4.3 (KIP-896, with JoinGroup v0–v1 restored in Kafka 4.0.1/4.1 by
// KAFKA-19444); maximums are the newest versions kmsg encodes that Kafka serves (4.3, and 4.4
// where muster implements the 4.4 feature: KIP-1331 and KIP-1242), except the Withheld ones.
var Supported = []API{
	{0, "Produce", VersionRange{3, 11}, VersionRange{3, 11}},
	{1, "Fetch", VersionRange{4, 18}, VersionRange{4, 18}},
	{2, "ListOffsets", VersionRange{1, 11}, VersionRange{1, 11}},
	{3, "Metadata", VersionRange{0, 13}, VersionRange{0, 13}},
	{8, "OffsetCommit", VersionRange{2, 10}, VersionRange{0, 10}},
	{9, "OffsetFetch", VersionRange{1, 10}, VersionRange{0, 10}},
	{10, "FindCoordinator", VersionRange{0, 6}, VersionRange{0, 6}},
	{11, "JoinGroup", VersionRange{0, 9}, VersionRange{0, 9}},
	{12, "Heartbeat", VersionRange{0, 4}, VersionRange{0, 4}},
	{13, "LeaveGroup", VersionRange{0, 5}, VersionRange{0, 5}},
	{14, "SyncGroup", VersionRange{0, 5}, VersionRange{0, 5}},
	{15, "DescribeGroups", VersionRange{0, 6}, VersionRange{0, 6}},
	{16, "ListGroups", VersionRange{0, 5}, VersionRange{0, 5}},
	{17, "SaslHandshake", VersionRange{0, 1}, VersionRange{0, 1}},
	{18, "ApiVersions", VersionRange{0, 5}, VersionRange{0, 5}},
	{19, "CreateTopics", VersionRange{2, 7}, VersionRange{2, 7}},
	{20, "DeleteTopics", VersionRange{1, 6}, VersionRange{1, 6}},
	{21, "DeleteRecords", VersionRange{0, 2}, VersionRange{0, 2}},
	{22, "InitProducerId", VersionRange{0, 5}, VersionRange{0, 5}},
	{23, "OffsetForLeaderEpoch", VersionRange{2, 4}, VersionRange{2, 4}},
	{24, "AddPartitionsToTxn", VersionRange{0, 5}, VersionRange{0, 5}},
	{25, "AddOffsetsToTxn", VersionRange{0, 4}, VersionRange{0, 4}},
	{26, "EndTxn", VersionRange{0, 4}, VersionRange{0, 4}},
	{27, "WriteTxnMarkers", VersionRange{0, 1}, VersionRange{0, 1}},
	{28, "TxnOffsetCommit", VersionRange{0, 4}, VersionRange{0, 4}},
	{29, "DescribeAcls", VersionRange{1, 3}, VersionRange{1, 3}},
	{30, "CreateAcls", VersionRange{1, 3}, VersionRange{1, 3}},
	{31, "DeleteAcls", VersionRange{1, 3}, VersionRange{1, 3}},
	{32, "DescribeConfigs", VersionRange{1, 4}, VersionRange{1, 4}},
	{33, "AlterConfigs", VersionRange{0, 2}, VersionRange{0, 2}},
	{36, "SaslAuthenticate", VersionRange{0, 2}, VersionRange{0, 2}},
	{37, "CreatePartitions", VersionRange{0, 3}, VersionRange{0, 3}},
	{42, "DeleteGroups", VersionRange{0, 3}, VersionRange{0, 3}},
	{44, "IncrementalAlterConfigs", VersionRange{0, 1}, VersionRange{0, 1}},
	{47, "OffsetDelete", VersionRange{0, 0}, VersionRange{0, 0}},
	{50, "DescribeUserScramCredentials", VersionRange{0, 0}, VersionRange{0, 0}},
	{51, "AlterUserScramCredentials", VersionRange{0, 0}, VersionRange{0, 0}},
	{60, "DescribeCluster", VersionRange{0, 2}, VersionRange{0, 2}},
	{61, "DescribeProducers", VersionRange{0, 0}, VersionRange{0, 0}},
	{65, "DescribeTransactions", VersionRange{0, 0}, VersionRange{0, 0}},
	{66, "ListTransactions", VersionRange{0, 2}, VersionRange{0, 2}},
	{68, "ConsumerGroupHeartbeat", VersionRange{0, 1}, VersionRange{0, 1}},
	{69, "ConsumerGroupDescribe", VersionRange{0, 1}, VersionRange{0, 1}},
	{76, "ShareGroupHeartbeat", VersionRange{1, 1}, VersionRange{1, 1}},
	{77, "ShareGroupDescribe", VersionRange{1, 1}, VersionRange{1, 1}},
	{78, "ShareFetch", VersionRange{1, 2}, VersionRange{1, 2}},
	{79, "ShareAcknowledge", VersionRange{1, 2}, VersionRange{1, 2}},
	{88, "StreamsGroupHeartbeat", VersionRange{0, 1}, VersionRange{0, 1}},
	{89, "StreamsGroupDescribe", VersionRange{0, 1}, VersionRange{0, 1}},
	{90, "DescribeShareGroupOffsets", VersionRange{0, 1}, VersionRange{0, 1}},
	{91, "AlterShareGroupOffsets", VersionRange{0, 0}, VersionRange{0, 0}},
	{92, "DeleteShareGroupOffsets", VersionRange{0, 0}, VersionRange{0, 0}},
	{93, "StreamsGroupTopologyDescriptionUpdate", VersionRange{0, 0}, VersionRange{0, 0}},
}

// Lookup returns the table entry for key.
func Lookup(key int16) (API, bool) {
	for _, a := range Supported {
		if a.Key == key {
			return a, true
		}
	}
	return API{}, false
}
