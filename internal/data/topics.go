package data

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/store/diskguard"
)

// topic is one topic. name, id and internal never change; parts and configs
// are guarded by Plane.mu and replaced (never mutated) when the topic grows or
// its configs change (under Plane.adminMu).
type topic struct {
	name     string
	id       [16]byte
	internal bool
	configs  map[string]string // overrides
	// lc is the effective log configuration: configs over the broker's
	// defaults in force.
	lc atomic.Pointer[logConfig]

	parts []*partition

	// life is held shared by produces while they append and exclusively by
	// DeleteTopics, so no append lands after the topic's keys are deleted.
	life    sync.RWMutex
	deleted bool
}

func newTopic(name string, id [16]byte, configs map[string]string, eff *config.Values) *topic {
	if configs == nil {
		configs = map[string]string{}
	}
	t := &topic{
		name:     name,
		id:       id,
		internal: kafkaInternalTopics[name],
		configs:  configs,
	}
	t.lc.Store(newLogConfig(eff, configs))
	return t
}

// logConfig is t's effective log configuration.
func (t *topic) logConfig() *logConfig { return t.lc.Load() }

// apiError is a Kafka error code with a message.
type apiError struct {
	code *kerr.Error
	msg  string
	// kafkaMsg marks msg as the whole message Kafka sends (a config
	// validation message), not a detail to prefix with the code's text.
	kafkaMsg bool
}

func (e *apiError) Error() string {
	switch {
	case e.kafkaMsg:
		return e.msg
	case e.msg == "":
		return e.code.Message
	}
	return e.code.Message + ": " + e.msg
}

func (e *apiError) Unwrap() error { return e.code }

func errf(code *kerr.Error, format string, args ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// validTopicName applies Kafka's Topic.validate: 1–249 characters from
// [a-zA-Z0-9._-], and not "." or "..". The result is "" when valid.
func validTopicName(name string) string {
	switch {
	case name == "":
		return "topic name is empty"
	case name == "." || name == "..":
		return "topic name cannot be \".\" or \"..\""
	case len(name) > 249:
		return "topic name is longer than 249 characters"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Sprintf("topic name %q contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return ""
}

// newTopicID returns a random UUID, never zero and never one whose base64
// form starts with '-' (Kafka's Uuid.randomUuid rule).
func newTopicID() [16]byte {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:])
		if id != ([16]byte{}) && id[0]>>2 != 62 {
			return id
		}
	}
}

// createSpec is a validated topic-creation request.
type createSpec struct {
	name       string
	partitions int32
	configs    map[string]string
}

// checkCreate validates a topic creation (name, partition count, configs
// against the broker's defaults in force).
func (p *Plane) checkCreate(name string, partitions int32, configs map[string]*string) (createSpec, *apiError) {
	if msg := validTopicName(name); msg != "" {
		return createSpec{}, errf(kerr.InvalidTopicException, "%s", msg)
	}
	if partitions <= 0 || partitions > maxPartitionsPerTopic {
		return createSpec{}, errf(kerr.InvalidPartitions, "number of partitions must be between 1 and %d, got %d", maxPartitionsPerTopic, partitions)
	}
	if msg := config.ValidateTopicConfigs(p.effective(), configs); msg != "" {
		return createSpec{}, &apiError{code: kerr.InvalidConfig, msg: msg, kafkaMsg: true}
	}
	out := make(map[string]string, len(configs))
	for k, v := range configs {
		out[k] = strings.TrimSpace(*v)
	}
	return createSpec{name: name, partitions: partitions, configs: out}, nil
}

// createTopic creates a validated topic durably and publishes the change.
// Errors: TOPIC_ALREADY_EXISTS, KAFKA_STORAGE_ERROR (also while the disk is
// short of space: a new topic grows the store).
func (p *Plane) createTopic(spec createSpec, validateOnly bool) (*topic, *apiError) {
	p.adminMu.Lock()
	if t, _ := p.lookup(spec.name); t != nil {
		p.adminMu.Unlock()
		return nil, errf(kerr.TopicAlreadyExists, "topic %q already exists", spec.name)
	}
	if other := p.collidingTopic(spec.name); other != "" {
		p.adminMu.Unlock()
		return nil, errf(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", spec.name, other)
	}
	t := newTopic(spec.name, newTopicID(), spec.configs, p.effective())
	if validateOnly {
		p.adminMu.Unlock()
		return t, nil
	}
	if err := p.st.CreateTopic(TopicRecord{ID: t.id, Name: t.name, Partitions: spec.partitions, Configs: t.configs}); err != nil {
		if errors.Is(err, ErrTopicExists) {
			// Created meanwhile by another node: learn it now (an auto-creation then uses it).
			if serr := p.syncTopicsLocked(); serr != nil {
				p.log.Warn("data: reading the shared catalog failed", "err", serr)
			}
			p.adminMu.Unlock()
			p.deliver()
			return nil, errf(kerr.TopicAlreadyExists, "topic %q already exists", spec.name)
		}
		p.adminMu.Unlock()
		if !errors.Is(err, diskguard.ErrRefused) {
			p.log.Error("create topic", "topic", t.name, "err", err)
		}
		return nil, errf(kerr.KafkaStorageError, "%v", err)
	}
	// A fresh topic ID has no stored keys, so the partitions start empty.
	for i := int32(0); i < spec.partitions; i++ {
		t.parts = append(t.parts, p.newPart(t.id, i))
	}
	p.mu.Lock()
	t.lc.Store(newLogConfig(p.effective(), t.configs)) // the broker configs in force now
	p.byName[t.name] = t
	p.byID[t.id] = t
	info := p.infoLocked(t)
	p.mu.Unlock()
	p.publish(TopicChange{Created: []TopicInfo{info}})
	p.adminMu.Unlock()
	p.log.Info("topic created", "topic", t.name, "partitions", spec.partitions)
	p.deliver()
	return t, nil
}

// collidingTopic returns an existing topic whose name differs from name only by '.' against '_'
// (their metric names would collide), or "". Kafka's ReplicationControlManager rejects such a
// creation with INVALID_TOPIC_EXCEPTION (validateNewTopicNames, Topic.unifyCollisionChars).
func (p *Plane) collidingTopic(name string) string {
	if !strings.ContainsAny(name, "._") {
		return ""
	}
	unified := strings.ReplaceAll(name, ".", "_")
	p.mu.RLock()
	defer p.mu.RUnlock()
	for other := range p.byName {
		if other != name && strings.ContainsAny(other, "._") && strings.ReplaceAll(other, ".", "_") == unified {
			return other
		}
	}
	return ""
}

// CreateTopic creates a topic with the given partition count and config
// overrides; the coordinator uses it for Kafka Streams internal topics.
// Errors wrap kerr codes: INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS,
// INVALID_CONFIG, TOPIC_ALREADY_EXISTS, KAFKA_STORAGE_ERROR.
func (p *Plane) CreateTopic(name string, partitions int32, configs map[string]string) (TopicInfo, error) {
	cfgs := make(map[string]*string, len(configs))
	for k, v := range configs {
		cfgs[k] = &v
	}
	spec, aerr := p.checkCreate(name, partitions, cfgs)
	if aerr != nil {
		return TopicInfo{}, aerr
	}
	t, aerr := p.createTopic(spec, false)
	if aerr != nil {
		return TopicInfo{}, aerr
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.infoLocked(t), nil
}

// autoCreate returns the topic called name, creating it with num.partitions
// when auto.create.topics.enable allows; an internal topic is never created
// here. Errors: UNKNOWN_TOPIC_OR_PARTITION (auto-creation off, or an internal
// topic that does not exist), INVALID_TOPIC_EXCEPTION, KAFKA_STORAGE_ERROR.
func (p *Plane) autoCreate(name string, allow bool) (*topic, []*partition, *apiError) {
	if t, parts := p.lookup(name); t != nil {
		return t, parts, nil
	}
	if msg := validTopicName(name); msg != "" {
		return nil, nil, errf(kerr.InvalidTopicException, "%s", msg)
	}
	if kafkaInternalTopics[name] { // created by their coordinator only, never by a client
		return nil, nil, &apiError{code: kerr.UnknownTopicOrPartition}
	}
	if !allow || !p.cfg.AutoCreateTopics {
		return nil, nil, &apiError{code: kerr.UnknownTopicOrPartition}
	}
	spec, aerr := p.checkCreate(name, p.cfg.NumPartitions, nil)
	if aerr != nil {
		return nil, nil, aerr
	}
	if _, aerr := p.createTopic(spec, false); aerr != nil && aerr.code != kerr.TopicAlreadyExists {
		return nil, nil, aerr
	}
	t, parts := p.lookup(name)
	if t == nil { // deleted concurrently
		return nil, nil, &apiError{code: kerr.UnknownTopicOrPartition}
	}
	return t, parts, nil
}

// deleteTopic removes t and all its stored keys durably.
func (p *Plane) deleteTopic(t *topic) *apiError {
	p.adminMu.Lock()
	p.mu.Lock()
	if p.byID[t.id] != t {
		p.mu.Unlock()
		p.adminMu.Unlock()
		return &apiError{code: kerr.UnknownTopicOrPartition}
	}
	delete(p.byName, t.name)
	delete(p.byID, t.id)
	info := p.infoLocked(t)
	parts := t.parts
	p.mu.Unlock()

	t.life.Lock() // waits for in-flight produces
	t.deleted = true
	err := p.st.DeleteTopic(TopicRecord{ID: t.id, Name: t.name, Partitions: int32(len(parts))})
	t.life.Unlock()
	p.endLeaderships(parts) // long-polling fetches notice the deletion
	if err != nil {
		// The topic is gone from memory; its keys may reappear on restart.
		p.log.Error("delete topic", "topic", t.name, "err", err)
	}
	p.publish(TopicChange{Deleted: []TopicInfo{info}})
	p.adminMu.Unlock()
	p.log.Info("topic deleted", "topic", t.name)
	p.deliver()
	if err != nil {
		return errf(kerr.KafkaStorageError, "%v", err)
	}
	return nil
}

// growTopic raises t's partition count to count durably.
// Errors: INVALID_PARTITIONS when count does not exceed the current count.
func (p *Plane) growTopic(t *topic, count int32, validateOnly bool) *apiError {
	p.adminMu.Lock()
	aerr := p.growTopicLocked(t, count, validateOnly)
	p.adminMu.Unlock()
	p.deliver()
	return aerr
}

func (p *Plane) growTopicLocked(t *topic, count int32, validateOnly bool) *apiError {
	p.mu.RLock()
	cur := int32(len(t.parts))
	live := p.byID[t.id] == t
	p.mu.RUnlock()
	if !live {
		return &apiError{code: kerr.UnknownTopicOrPartition}
	}
	switch {
	case count < cur:
		return errf(kerr.InvalidPartitions, "topic currently has %d partitions, which is higher than the requested %d", cur, count)
	case count == cur:
		return errf(kerr.InvalidPartitions, "topic already has %d partitions", cur)
	case count > maxPartitionsPerTopic:
		return errf(kerr.InvalidPartitions, "number of partitions must be at most %d", maxPartitionsPerTopic)
	}
	if validateOnly {
		return nil
	}
	if err := p.st.UpdateTopic(TopicRecord{ID: t.id, Name: t.name, Partitions: count, Configs: t.configs}, diskguard.CreatePartitions); err != nil {
		return errf(kerr.KafkaStorageError, "%v", err)
	}
	p.mu.Lock()
	parts := append([]*partition(nil), t.parts...)
	for i := cur; i < count; i++ {
		parts = append(parts, p.newPart(t.id, i))
	}
	t.parts = parts
	info := p.infoLocked(t)
	p.mu.Unlock()
	p.publish(TopicChange{Resized: []TopicInfo{info}})
	p.log.Info("topic partitions grown", "topic", t.name, "from", cur, "to", count)
	return nil
}

// AutoCreateTopics is auto.create.topics.enable: whether Metadata and Produce create unknown
// topics (authorization adapters check CREATE before letting them).
func (p *Plane) AutoCreateTopics() bool { return p.cfg.AutoCreateTopics }

// NodeID is this broker's node id.
func (p *Plane) NodeID() int32 { return p.cfg.NodeID }
