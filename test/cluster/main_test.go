// Package cluster_test runs muster in cluster mode over a real PostgreSQL server (Debian's,
// started by internal/pgtest): in-process brokers, and `muster serve` processes on loopback
// ports that the tests kill, stop, pause and restart.
package cluster_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/muster-io/muster/internal/pgtest"
)

// musterBin is the binary built once for the package by TestMain.
var musterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "muster-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin = filepath.Join(dir, "muster")
	root, _ := filepath.Abs("../..")
	build := exec.Command("go", "build", "-o", musterBin, "./cmd/muster")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building muster:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
