// Package cluster_test runs muster in cluster mode over a real PostgreSQL server: in-process
// brokers and `muster serve` processes on loopback ports sharing one database.
package cluster_test

import (
	"os"
	"testing"

	"github.com/muster-io/muster/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
