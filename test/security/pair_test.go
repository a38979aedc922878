package security

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/security/securitytest"
)

type x509Pair = securitytest.Pair

func otherCA(t testing.TB) *securitytest.PKI { return securitytest.NewPKI(t) }

type cobraCommand = cobra.Command
