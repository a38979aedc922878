// Package security is muster's security model, in Kafka's terms: the authenticated Session of a
// connection (listener, principal, client host), the Authorizer with the semantics of Kafka's
// StandardAuthorizer (ACL bindings with LITERAL, PREFIXED and wildcard patterns, DENY wins,
// implied DESCRIBE, super.users, allow.everyone.if.no.acl.found), ACL bindings and filters as
// CreateAcls/DescribeAcls/DeleteAcls carry them, SCRAM credentials (salted keys only), and the
// Store interface through which both are kept durably.
//
// Request adapters authorize before they look a resource up, so a caller without DESCRIBE learns
// nothing about whether the resource exists (hide-existence): see Check and its helpers.
package security
