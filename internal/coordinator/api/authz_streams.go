package api

import (
	"context"
	"log/slog"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/coordinator"
	"github.com/muster-io/muster/internal/metadata"
	"github.com/muster-io/muster/internal/security"
)

// KIP-1071 streams groups and KIP-1331 topology descriptions (KafkaApis.handleStreamsGroupHeartbeat
// and handleStreamsGroupDescribe): the heartbeat needs READ on the group and DESCRIBE on every
// topic of the topology it sends, and the internal topics it would create need CREATE; the
// topology description push needs READ on the group; a description needs DESCRIBE on the group
// and on every topic of the group's topology, which also covers its topology description.

// sgDescribeTopicsDenied is Kafka's message for a streams group whose topology names a topic the
// caller may not DESCRIBE.
const sgDescribeTopicsDenied = "The described group uses topics that the client is not authorized to describe."

// authorizeStreamsGroupHeartbeat: the protocol gate first (StreamsGroupHeartbeat answers
// UNSUPPORTED_VERSION when streams groups are disabled), then READ on the group, then, when the
// request carries a topology: Kafka's internal topics in it → STREAMS_INVALID_TOPOLOGY, invalid
// topic names → STREAMS_INVALID_TOPOLOGY, DESCRIBE on every source, repartition and changelog
// topic (any denied: TOPIC_AUTHORIZATION_FAILED at the top level).
func (s *Service) authorizeStreamsGroupHeartbeat(ctx context.Context, r Req, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	if !s.Cfg.Streams.Enabled {
		return s.StreamsGroupHeartbeat(ctx, r, req)
	}
	fail := func(code *kerr.Error, msg *string) *kmsg.StreamsGroupHeartbeatResponse {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code.Code, msg
		return resp
	}
	if err := r.Check.Group(req.Group); err != nil {
		return fail(kerr.GroupAuthorizationFailed, nil)
	}
	if req.Topology != nil {
		topics := streamsTopologyTopics(req.Topology)
		var internal, invalid []string
		for _, t := range topics {
			if metadata.IsInternalTopic(t) {
				internal = append(internal, t)
			}
			if !metadata.ValidTopicName(t) {
				invalid = append(invalid, t)
			}
		}
		if len(internal) > 0 {
			return fail(kerr.StreamsInvalidTopology, kmsg.StringPtr("Use of Kafka internal topics "+strings.Join(internal, ",")+" in a Kafka Streams topology is prohibited."))
		}
		if len(invalid) > 0 {
			return fail(kerr.StreamsInvalidTopology, kmsg.StringPtr("Topic names "+strings.Join(invalid, ",")+" are not valid topic names."))
		}
		if !r.open() && !allAllowed(r.topicsAllowed(security.OpDescribe, topics)) {
			return fail(kerr.TopicAuthorizationFailed, nil)
		}
	}
	return s.StreamsGroupHeartbeat(ctx, r, req)
}

// streamsTopologyTopics lists the distinct source, repartition sink, repartition source and
// changelog topics of a heartbeat's topology, in order of appearance.
func streamsTopologyTopics(t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, st := range t.Subtopologies {
		for _, n := range st.SourceTopics {
			add(n)
		}
		for _, n := range st.RepartitionSinkTopics {
			add(n)
		}
		for _, ti := range st.RepartitionSourceTopics {
			add(ti.Topic)
		}
		for _, ti := range st.StateChangelogTopics {
			add(ti.Topic)
		}
	}
	return out
}

// authorizeStreamsInternalTopics decides whether the internal topics a heartbeat's group needs
// may be created: CREATE on the cluster, else CREATE on each topic. If any is denied none is
// created, and the MISSING_INTERNAL_TOPICS status says which (Kafka's "; Unauthorized to CREATE
// on topics a, b.").
func authorizeStreamsInternalTopics(r Req, out *coordinator.StreamsHeartbeatResult) bool {
	if len(out.Create) == 0 || r.open() {
		return true
	}
	names := make([]string, len(out.Create))
	for i, t := range out.Create {
		names[i] = t.Name
	}
	denied := r.Check.CreatableTopics(names)
	if len(denied) == 0 {
		return true
	}
	detail := "Unauthorized to CREATE on topics " + strings.Join(denied, ", ") + "."
	resp := out.Response
	for i := range resp.Status {
		if st := &resp.Status[i]; st.StatusCode == coordinator.StreamsStatusMissingInternalTopics {
			st.StatusDetail = strings.TrimSuffix(st.StatusDetail, ".") + "; " + detail
			return false
		}
	}
	st := kmsg.NewStreamsGroupHeartbeatResponseStatus()
	st.StatusCode, st.StatusDetail = coordinator.StreamsStatusMissingInternalTopics, detail
	resp.Status = append(resp.Status, st)
	return false
}

// createStreamsInternalTopics creates the internal topics a streams group needs.
func (s *Service) createStreamsInternalTopics(topics []coordinator.StreamsInternalTopic) {
	if len(topics) == 0 || s.Topics == nil {
		return
	}
	for _, t := range topics {
		if err := s.Topics.CreateTopic(t.Name, t.Partitions, t.Configs); err != nil {
			s.limitedLog().LogKey("create "+t.Name, slog.LevelWarn, "streams: creating internal topic failed", "topic", t.Name, "partitions", t.Partitions, "err", err)
		}
	}
}

// authorizeStreamsGroupDescribe: the protocol gate first (UNSUPPORTED_VERSION for every group),
// then DESCRIBE on each group: denied groups come first as GROUP_AUTHORIZATION_FAILED rows, the
// described ones follow in request order, with their KIP-430 bitfield when requested. KIP-1331:
// the same GROUP DESCRIBE covers the topology description, which is fetched only for groups
// that stay described (StreamsGroupDescribe).
func (s *Service) authorizeStreamsGroupDescribe(ctx context.Context, r Req, req *kmsg.StreamsGroupDescribeRequest) *kmsg.StreamsGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	if !s.Cfg.Streams.Enabled {
		for _, id := range req.Groups {
			g := kmsg.NewStreamsGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = id, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	sub := *req
	sub.Groups = nil
	for _, id := range req.Groups {
		if r.Check.Allowed(security.OpDescribe, security.Group, id) {
			sub.Groups = append(sub.Groups, id)
			continue
		}
		g := kmsg.NewStreamsGroupDescribeResponseGroup()
		g.Group, g.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
		resp.Groups = append(resp.Groups, g)
	}
	if len(sub.Groups) == 0 {
		return resp
	}
	described := s.StreamsGroupDescribe(ctx, r, &sub).Groups
	for i := range described {
		if d := &described[i]; d.ErrorCode == 0 {
			d.AuthorizedOperations = r.Check.Operations(req.IncludeAuthorizedOperations, security.Group, d.Group)
		}
	}
	resp.Groups = append(resp.Groups, described...)
	return resp
}

// hideUndescribableTopologies turns each described group whose topology names a topic the
// caller may not DESCRIBE into a TOPIC_AUTHORIZATION_FAILED row without members or topology,
// checked per group (each topic decided once per request).
func hideUndescribableTopologies(r Req, groups []kmsg.StreamsGroupDescribeResponseGroup) {
	if r.open() {
		return
	}
	topicsOK := topicDecisions{r: r, op: security.OpDescribe}
	for i := range groups {
		d := &groups[i]
		if d.ErrorCode != 0 || d.Topology == nil {
			continue
		}
		var topics []string
		for _, st := range d.Topology.Subtopologies {
			topics = append(topics, st.SourceTopics...)
			topics = append(topics, st.RepartitionSinkTopics...)
			for _, ti := range st.RepartitionSourceTopics {
				topics = append(topics, ti.Topic)
			}
			for _, ti := range st.StateChangelogTopics {
				topics = append(topics, ti.Topic)
			}
		}
		if !topicsOK.all(topics) {
			g := kmsg.NewStreamsGroupDescribeResponseGroup()
			g.Group, g.ErrorCode, g.ErrorMessage = d.Group, kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr(sgDescribeTopicsDenied)
			g.Members = []kmsg.StreamsGroupDescribeResponseGroupMember{}
			*d = g
		}
	}
}

// authorizeStreamsGroupTopologyDescriptionUpdate: KIP-1331's push is guarded by READ on the
// group, as the heartbeat is: after the protocol gate and before the plugin check and the
// member validation, so a denied caller learns nothing of the group or its members and the
// plugin is never called.
func (s *Service) authorizeStreamsGroupTopologyDescriptionUpdate(ctx context.Context, r Req, req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) *kmsg.StreamsGroupTopologyDescriptionUpdateResponse {
	if s.Cfg.Streams.Enabled {
		if err := r.Check.Group(req.Group); err != nil {
			resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
			resp.ErrorCode = coordinator.ErrorCode(err)
			return resp
		}
	}
	return s.StreamsGroupTopologyDescriptionUpdate(ctx, r.Meta, req)
}
