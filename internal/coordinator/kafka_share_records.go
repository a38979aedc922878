package coordinator

import "errors"

// ErrNotKafkaRecord marks a coordinator record that has no __consumer_offsets counterpart in
// Kafka (muster's share-partition state, which Kafka keeps in __share_group_state, and pending
// transactional offsets): the readable __consumer_offsets leaves it out.
var ErrNotKafkaRecord = errors.New("coordinator: not a __consumer_offsets record")

// Share group records (KIP-932) in Kafka's layouts (ShareGroup*Value.json, value version 0,
// flexible).

// kafkaShareMetadata: ShareGroupMetadataValue {Epoch int32, MetadataHash int64 tag 0 (KIP-1101)}.
func kafkaShareMetadata(value []byte) ([]byte, error) {
	var epoch int32
	var hash int64
	if err := decodeValue(value, 0, "ShareGroupMetadata", func(d *Dec, _ int16) {
		epoch, hash = d.Int32(), d.Int64()
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(epoch)
	if hash != 0 {
		e.Tags(int64Tag(0, hash))
	} else {
		e.NoTags()
	}
	return e.B, nil
}

// kafkaShareMember: ShareGroupMemberMetadataValue {RackId, ClientId, ClientHost,
// SubscribedTopicNames}.
func kafkaShareMember(value []byte) ([]byte, error) {
	var m shareMember
	if err := decodeValue(value, 0, "ShareGroupMemberMetadata", func(d *Dec, _ int16) {
		m.rackID, m.clientID, m.clientHost, m.subscribed = d.NullableString(), d.String(), d.String(), d.Strings()
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.NullableString(m.rackID)
	e.String(m.clientID)
	e.String(m.clientHost)
	e.Strings(m.subscribed)
	e.NoTags()
	return e.B, nil
}

// kafkaShareTargetMetadata: ShareGroupTargetAssignmentMetadataValue {AssignmentEpoch}.
func kafkaShareTargetMetadata(value []byte) ([]byte, error) {
	var epoch int32
	if err := decodeValue(value, 0, "ShareGroupTargetAssignmentMetadata", func(d *Dec, _ int16) { epoch = d.Int32() }); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(epoch)
	e.NoTags()
	return e.B, nil
}

// kafkaShareTargetMember: ShareGroupTargetAssignmentMemberValue {TopicPartitions}.
func kafkaShareTargetMember(value []byte) ([]byte, error) {
	var a topicPartitions
	if err := decodeValue(value, 0, "ShareGroupTargetAssignmentMember", func(d *Dec, _ int16) { a = decTP(d) }); err != nil {
		return nil, err
	}
	e := newFlexValue()
	kafkaTopicPartitions(e, a, nil)
	e.NoTags()
	return e.B, nil
}

// kafkaShareCurrent: ShareGroupCurrentMemberAssignmentValue {MemberEpoch, PreviousMemberEpoch,
// State, AssignedPartitions}.
func kafkaShareCurrent(value []byte) ([]byte, error) {
	c := &shareCurrent{}
	var state int8
	if err := decodeValue(value, 0, "ShareGroupCurrentMemberAssignment", func(d *Dec, _ int16) {
		c.epoch, c.prevEpoch, state = d.Int32(), d.Int32(), d.Int8()
		c.assigned = decTP(d)
	}); err != nil {
		return nil, err
	}
	e := newFlexValue()
	e.Int32(c.epoch)
	e.Int32(c.prevEpoch)
	e.Int8(state)
	kafkaTopicPartitions(e, c.assigned, nil)
	e.NoTags()
	return e.B, nil
}
