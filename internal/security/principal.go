package security

import (
	"fmt"
	"strings"
)

// Principal is a Kafka principal, "Type:name" (KafkaPrincipal). Comparison is case-sensitive.
type Principal struct {
	Type string
	Name string
}

// PrincipalTypeUser is the only principal type muster authenticates.
const PrincipalTypeUser = "User"

// Anonymous is the principal of an unauthenticated connection (PLAINTEXT, or SSL without a
// client certificate).
var Anonymous = Principal{Type: PrincipalTypeUser, Name: "ANONYMOUS"}

// WildcardPrincipal is the string form of the principal that matches every user in an ACL.
const WildcardPrincipal = "User:*"

// User returns the User principal called name.
func User(name string) Principal { return Principal{Type: PrincipalTypeUser, Name: name} }

// String is "Type:name".
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal parses "Type:name" (SecurityUtils.parseKafkaPrincipal): a non-empty type, a
// colon, and the rest as the name (which may itself contain colons, as DNs do not).
func ParsePrincipal(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok || typ == "" || name == "" {
		return Principal{}, fmt.Errorf("principal %q: want Type:name (e.g. User:alice)", s)
	}
	return Principal{Type: typ, Name: name}, nil
}
