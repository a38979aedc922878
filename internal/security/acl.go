package security

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's ACL enums, as kmsg names them.
type (
	// ResourceType is an ACL resource type (TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, ...).
	ResourceType = kmsg.ACLResourceType
	// PatternType is an ACL resource pattern type (LITERAL, PREFIXED; ANY and MATCH in filters).
	PatternType = kmsg.ACLResourcePatternType
	// Operation is an ACL operation (READ, WRITE, DESCRIBE, ...).
	Operation = kmsg.ACLOperation
	// Permission is ALLOW or DENY.
	Permission = kmsg.ACLPermissionType
)

// The names of the enum values used throughout muster.
const (
	Topic           = kmsg.ACLResourceTypeTopic
	Group           = kmsg.ACLResourceTypeGroup
	Cluster         = kmsg.ACLResourceTypeCluster
	TransactionalID = kmsg.ACLResourceTypeTransactionalId
	DelegationToken = kmsg.ACLResourceTypeDelegationToken
	UserResource    = kmsg.ACLResourceTypeUser

	Literal  = kmsg.ACLResourcePatternTypeLiteral
	Prefixed = kmsg.ACLResourcePatternTypePrefixed

	OpAll             = kmsg.ACLOperationAll
	OpRead            = kmsg.ACLOperationRead
	OpWrite           = kmsg.ACLOperationWrite
	OpCreate          = kmsg.ACLOperationCreate
	OpDelete          = kmsg.ACLOperationDelete
	OpAlter           = kmsg.ACLOperationAlter
	OpDescribe        = kmsg.ACLOperationDescribe
	OpClusterAction   = kmsg.ACLOperationClusterAction
	OpDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	OpAlterConfigs    = kmsg.ACLOperationAlterConfigs
	OpIdempotentWrite = kmsg.ACLOperationIdempotentWrite
	OpCreateTokens    = kmsg.ACLOperationCreateTokens
	OpDescribeTokens  = kmsg.ACLOperationDescribeTokens

	Allow = kmsg.ACLPermissionTypeAllow
	Deny  = kmsg.ACLPermissionTypeDeny
)

// ClusterName is the name of the one CLUSTER resource.
const ClusterName = "kafka-cluster"

// WildcardResource is the LITERAL resource name that matches every resource of its type.
const WildcardResource = "*"

// SupportedOperations lists the operations a resource type supports (AclEntry.supportedOperations),
// which authorized-operations bitfields (KIP-430) are computed over.
func SupportedOperations(rt ResourceType) []Operation {
	switch rt {
	case Topic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	case Group:
		return []Operation{OpRead, OpDescribe, OpDelete, OpDescribeConfigs, OpAlterConfigs}
	case Cluster:
		return []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case TransactionalID:
		return []Operation{OpDescribe, OpWrite}
	case DelegationToken:
		return []Operation{OpDescribe}
	case UserResource:
		return []Operation{OpCreateTokens, OpDescribeTokens}
	}
	return nil
}

// AllOperationsBits is the authorized-operations bitfield with every supported operation of rt set
// (the answer when no authorizer is configured).
func AllOperationsBits(rt ResourceType) int32 {
	var bits int32
	for _, op := range SupportedOperations(rt) {
		bits |= 1 << op
	}
	return bits
}

// OmittedAuthorizedOperations is the authorized-operations value of a response whose request did
// not ask for it (Integer.MIN_VALUE).
const OmittedAuthorizedOperations int32 = -2147483648

// Binding is one ACL: a resource pattern and an access control entry (Kafka's AclBinding).
type Binding struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType
	Principal    string
	Host         string
	Operation    Operation
	Permission   Permission
}

// String is Kafka's AclBinding text, used in logs and the CLI.
func (b Binding) String() string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s) on %s:%s:%s",
		b.Principal, b.Host, b.Operation, b.Permission, b.ResourceType, b.PatternType, b.ResourceName)
}

// Validate applies CreateAcls' checks (AclControlManager.validateNewAcl); the error message is
// what the CreateAcls result carries with INVALID_REQUEST.
func (b Binding) Validate() error {
	switch b.ResourceType {
	case Topic, Group, Cluster, TransactionalID, DelegationToken, UserResource:
	default:
		return fmt.Errorf("invalid resource type %s", b.ResourceType)
	}
	if b.PatternType != Literal && b.PatternType != Prefixed {
		return fmt.Errorf("invalid pattern type %s", b.PatternType)
	}
	if b.Operation == kmsg.ACLOperationUnknown || b.Operation == kmsg.ACLOperationAny || b.Operation > OpDescribeTokens {
		return fmt.Errorf("invalid operation %s", b.Operation)
	}
	if b.Permission != Allow && b.Permission != Deny {
		return fmt.Errorf("invalid permission type %s", b.Permission)
	}
	if b.ResourceName == "" {
		return errors.New("resource name should not be empty")
	}
	if b.ResourceType == Cluster && b.ResourceName != ClusterName {
		return fmt.Errorf("the only valid name for the CLUSTER resource is %s", ClusterName)
	}
	if _, err := ParsePrincipal(b.Principal); err != nil {
		return fmt.Errorf("could not parse principal from '%s'", b.Principal)
	}
	if b.Host == "" {
		return errors.New("host should not be empty (use * for every host)")
	}
	return nil
}

// Filter selects bindings (Kafka's AclBindingFilter), as DescribeAcls and DeleteAcls carry it.
// Nil strings and ANY enums match everything.
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate rejects filters with UNKNOWN fields (INVALID_REQUEST).
func (f Filter) Validate() error {
	switch {
	case f.ResourceType == kmsg.ACLResourceTypeUnknown || f.ResourceType > UserResource:
		return errors.New("unknown resource type in the filter")
	case f.PatternType == kmsg.ACLResourcePatternTypeUnknown || f.PatternType > Prefixed:
		return errors.New("unknown pattern type in the filter")
	case f.Operation == kmsg.ACLOperationUnknown || f.Operation > OpDescribeTokens:
		return errors.New("unknown operation in the filter")
	case f.Permission == kmsg.ACLPermissionTypeUnknown || f.Permission > Allow:
		return errors.New("unknown permission type in the filter")
	}
	return nil
}

// Matches reports whether b is selected by f (ResourcePatternFilter and AccessControlEntryFilter):
// pattern MATCH with a name selects every binding that affects that resource: the LITERAL name,
// LITERAL "*" and PREFIXED patterns that are prefixes of it.
func (f Filter) Matches(b Binding) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != b.ResourceType {
		return false
	}
	switch f.PatternType {
	case kmsg.ACLResourcePatternTypeAny:
		if f.ResourceName != nil && *f.ResourceName != b.ResourceName {
			return false
		}
	case kmsg.ACLResourcePatternTypeMatch:
		if f.ResourceName != nil {
			n := *f.ResourceName
			switch b.PatternType {
			case Literal:
				if b.ResourceName != n && b.ResourceName != WildcardResource {
					return false
				}
			case Prefixed:
				if len(b.ResourceName) > len(n) || n[:len(b.ResourceName)] != b.ResourceName {
					return false
				}
			default:
				return false
			}
		}
	default:
		if f.PatternType != b.PatternType || (f.ResourceName != nil && *f.ResourceName != b.ResourceName) {
			return false
		}
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != kmsg.ACLOperationAny && f.Operation != b.Operation {
		return false
	}
	if f.Permission != kmsg.ACLPermissionTypeAny && f.Permission != b.Permission {
		return false
	}
	return true
}

// parseHost is an ACL host as an address ("*" and names: invalid).
func parseHost(h string) netip.Addr {
	a, err := netip.ParseAddr(h)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}
