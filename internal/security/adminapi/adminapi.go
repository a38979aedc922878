// Package adminapi serves the security admin APIs: CreateAcls, DescribeAcls and DeleteAcls
// (Kafka's AclApis) and DescribeUserScramCredentials and AlterUserScramCredentials. Each handler
// authorizes first (CLUSTER DESCRIBE to read, CLUSTER ALTER to change) and answers Kafka's codes:
// SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED without the ACL.
package adminapi

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/muster-io/muster/internal/security"
)

// ACLs is the ACL store the ACL APIs manage (security.StandardAuthorizer).
type ACLs interface {
	CreateACLs([]security.Binding) []error
	DeleteACLs([]security.Filter) ([][]security.Binding, error)
	DescribeACLs(security.Filter) []security.Binding
}

// Handlers serve the security admin APIs.
type Handlers struct {
	// ACLs is nil when no authorizer is configured (authorizer.class.name unset).
	ACLs ACLs
	// Scram holds the SCRAM credentials.
	Scram *security.ScramCredentials
}

func str(s string) *string { return &s }

func errMsg(e *kerr.Error, msg string) (int16, *string) {
	if msg == "" {
		msg = e.Description
	}
	return e.Code, &msg
}

// securityDisabled is the answer of the ACL APIs on a broker without an authorizer.
const securityDisabled = "No Authorizer is configured on the broker"
