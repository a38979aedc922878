package server

import (
	"context"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/wire"
)

// softwareNameOrVersion is what ApiVersions v3+ accepts as ClientSoftwareName and
// ClientSoftwareVersion (Kafka's ApiVersionsRequest.isValid, KIP-511).
var softwareNameOrVersion = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// apiVersions answers ApiVersions v0–v5 from wire.Supported, listing only keys with a handler.
// v3+ requires a valid client software name and version (INVALID_REQUEST otherwise, KIP-511);
// v5+ carries the cluster and node the client believes it reached (KIP-1242): both or neither
// must be set (INVALID_REQUEST), and naming another cluster or node answers
// REBOOTSTRAP_REQUIRED so the client starts over from its bootstrap servers.
func (s *Server) apiVersions(_ context.Context, r *Request) kmsg.Response {
	req := r.Body.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (!softwareNameOrVersion.MatchString(req.ClientSoftwareName) ||
		!softwareNameOrVersion.MatchString(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	if req.Version >= 5 {
		hasCluster, hasNode := req.ClusterID != nil, req.NodeID != -1
		switch {
		case hasCluster != hasNode:
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		case hasCluster && (*req.ClusterID != s.opts.ClusterID || req.NodeID != s.opts.NodeID):
			resp.ErrorCode = kerr.RebootstrapRequired.Code
			return resp
		}
	}
	resp.ApiKeys = s.apiKeys()
	return resp
}

// apiKeys lists the served keys; handlers are registered before Serve, so the list is built once
// and shared by every response (encoding does not modify it).
func (s *Server) apiKeys() []kmsg.ApiVersionsResponseApiKey {
	s.apiKeysOnce.Do(func() { s.apiKeysList = s.buildAPIKeys() })
	return s.apiKeysList
}

func (s *Server) buildAPIKeys() []kmsg.ApiVersionsResponseApiKey {
	var out []kmsg.ApiVersionsResponseApiKey
	for _, a := range wire.Supported {
		if s.handlers[a.Key] == nil {
			continue
		}
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.Key, a.Advertised.Min, a.Advertised.Max
		out = append(out, k)
	}
	return out
}

// apiVersionsFallback is the v0 response to an ApiVersions request of an unknown version.
func (s *Server) apiVersionsFallback() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = s.apiKeys()
	return resp
}
