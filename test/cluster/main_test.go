// Package cluster_test runs muster in cluster mode over a real PostgreSQL server (Debian's,
// started by internal/pgtest): in-process brokers, and `muster serve` processes on loopback
// ports that the tests kill, stop, pause and restart.
package cluster_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/muster-io/muster/internal/pgtest"
	"github.com/muster-io/muster/internal/testutil"
)

// musterBin is the binary built once for the package by TestMain.
var musterBin string

func TestMain(m *testing.M) {
	bins, cleanup, err := testutil.BuildBinaries("muster-cluster-", testutil.MusterPkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin = bins[0]
	code := pgtest.Main(m)
	cleanup()
	os.Exit(code)
}
