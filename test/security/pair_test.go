package security

import "github.com/muster-io/muster/internal/security/securitytest"

type x509Pair = securitytest.Pair
