package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/wire"
)

// apiVersions answers ApiVersions v0–v4 from wire.Supported, listing only keys with a handler.
func (s *Server) apiVersions(_ context.Context, r *Request) kmsg.Response {
	req := r.Body.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
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
