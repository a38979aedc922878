package security

// The group coordinator's adapters authorize with these helpers (KafkaApis and
// AuthorizerIntegrationTest are the oracle). Each API checks its GROUP operation first; only the
// authorized subset of a request reaches the coordinator.

// GroupOperation is the operation on the GROUP resource that a group-coordinator API checks:
//
//	READ:     JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14), OffsetCommit (8),
//	          TxnOffsetCommit (28), ConsumerGroupHeartbeat (68), StreamsGroupHeartbeat (88),
//	          StreamsGroupTopologyDescriptionUpdate (93, KIP-1331), ShareGroupHeartbeat (76),
//	          ShareFetch (78), ShareAcknowledge (79), AlterShareGroupOffsets (91)
//	DESCRIBE: OffsetFetch (9), FindCoordinator (10, key type GROUP), DescribeGroups (15),
//	          ConsumerGroupDescribe (69), StreamsGroupDescribe (89), ShareGroupDescribe (77),
//	          DescribeShareGroupOffsets (90)
//	DELETE:   DeleteGroups (42), OffsetDelete (47), DeleteShareGroupOffsets (92)
//
// ListGroups (16) has no single check: it filters with ListGroupsFilter. ok is false for keys
// that are not group APIs.
func GroupOperation(apiKey int16) (op Operation, ok bool) {
	switch apiKey {
	case 8, 11, 12, 13, 14, 28, 68, 76, 78, 79, 88, 91, 93:
		return OpRead, true
	case 9, 10, 15, 69, 77, 89, 90:
		return OpDescribe, true
	case 42, 47, 92:
		return OpDelete, true
	}
	return 0, false
}

// TopicOperation is the operation a group API checks on each topic it names, after the group:
// READ for OffsetCommit and TxnOffsetCommit (denied: TOPIC_AUTHORIZATION_FAILED on that topic's
// partitions, the others are committed) and OffsetDelete; DESCRIBE for OffsetFetch (explicit
// topics: TOPIC_AUTHORIZATION_FAILED per partition; all topics: left out silently),
// ConsumerGroupHeartbeat's SubscribedTopicNames (any undescribable: top-level
// TOPIC_AUTHORIZATION_FAILED), ConsumerGroupDescribe and StreamsGroupDescribe (a group naming an
// undescribable topic becomes a TOPIC_AUTHORIZATION_FAILED row) and StreamsGroupHeartbeat's
// topology topics. Share groups (KIP-932): READ for ShareFetch, ShareAcknowledge,
// AlterShareGroupOffsets and DeleteShareGroupOffsets, DESCRIBE for ShareGroupHeartbeat's
// subscriptions, ShareGroupDescribe and DescribeShareGroupOffsets.
func TopicOperation(apiKey int16) (op Operation, ok bool) {
	switch apiKey {
	case 8, 28, 47, 78, 79, 91, 92:
		return OpRead, true
	case 9, 68, 69, 76, 77, 88, 89, 90:
		return OpDescribe, true
	}
	return 0, false
}

// Group authorizes the group API apiKey on group for the request (audited), returning nil or
// GROUP_AUTHORIZATION_FAILED: the answer whether or not the group exists.
func (c Check) Group(group string) error {
	op, ok := GroupOperation(c.API)
	if !ok {
		op = OpDescribe
	}
	if c.Allowed(op, Group, group) {
		return nil
	}
	return DeniedError(Group)
}

// ListGroupsFilter is ListGroups' filter (KIP-231): with CLUSTER DESCRIBE every group is
// listed, otherwise only the groups the caller may DESCRIBE; never an error, never audited.
func (c Check) ListGroupsFilter() func(group string) bool {
	if c.Visible(OpDescribe, Cluster, ClusterName) {
		return func(string) bool { return true }
	}
	return func(g string) bool { return c.Visible(OpDescribe, Group, g) }
}

// DescribableTopics is the silent topic filter of OffsetFetch for all topics, of a group
// description's offsets, and of KIP-848 regex resolution (the topics a member may DESCRIBE when
// its heartbeat refreshes the regex).
func (c Check) DescribableTopics() func(topic string) bool {
	return func(t string) bool { return c.Visible(OpDescribe, Topic, t) }
}

// CreatableTopics reports whether the caller may create topic (CLUSTER CREATE, else TOPIC
// CREATE): streams internal topics are created only when every one is allowed.
func (c Check) CreatableTopics(topics []string) (denied []string) {
	if c.Visible(OpCreate, Cluster, ClusterName) {
		return nil
	}
	for _, t := range topics {
		if !c.Allowed(OpCreate, Topic, t) {
			denied = append(denied, t)
		}
	}
	return denied
}
