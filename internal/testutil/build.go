package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// MusterPkg is the import path of the muster command.
const MusterPkg = "github.com/muster-io/muster/cmd/muster"

// BuildBinaries builds each package (an import path) into a new temporary directory (its name
// starts with prefix), each binary named after the last element of its path, and returns their
// paths in order with a function that removes the directory. For a TestMain that builds the
// binaries its package's tests run as child processes.
func BuildBinaries(prefix string, pkgs ...string) (bins []string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	for _, pkg := range pkgs {
		bin := filepath.Join(dir, path.Base(pkg))
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
		bins = append(bins, bin)
	}
	return bins, cleanup, nil
}

// BuildMuster builds the muster command into t's temporary directory and returns its path.
func BuildMuster(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "muster")
	if out, err := exec.Command("go", "build", "-o", bin, MusterPkg).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
