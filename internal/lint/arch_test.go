// Package lint holds tests that keep muster's architecture as DESIGN.md draws it (in the manner
// of pebble's internal/lint): the group coordinator's core stays pure, and no layer imports a
// layer above it.
package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/muster-io/muster/"

// pureDirs are the packages of the coordinator's pure core and the pure algorithms it uses:
// data in, data out, no I/O, goroutines, locks, wall clock or randomness.
var pureDirs = []string{
	"internal/coordinator",
	"internal/coordinator/txn",
	"internal/metadata",
	"internal/metahash",
	"internal/assign",
	"internal/streams/assignor",
}

// allowed are the exceptions of the pure algorithm packages: a sync.Pool of scratch buffers
// that concurrent shards share (no state survives a call), and unsafe.StringData to compare
// interned strings by pointer.
var allowed = map[string][]string{
	"internal/assign":           {"sync", "unsafe"},
	"internal/streams/assignor": {"sync"},
}

// forbiddenImports may not appear in a pure package (prefix match for the trees).
var forbiddenImports = []string{
	"os", "os/", "net", "net/", "io/fs", "syscall", "sync", "sync/", "context",
	"crypto/rand", "math/rand", "math/rand/v2", "unsafe", "runtime",
	module + "internal/store", module + "internal/data", module + "internal/server",
	module + "internal/broker", module + "internal/config", module + "internal/coordinator/engine",
	module + "internal/coordinator/api", module + "internal/streams/topodesc",
}

// forbiddenCalls are package-level functions a pure package may not call.
var forbiddenCalls = map[string][]string{
	"time": {"Now", "Since", "Until", "After", "AfterFunc", "Sleep", "NewTimer", "NewTicker", "Tick"},
}

// layers orders the coordinator's layers bottom-up: a package may import only packages of its
// own layer or below (store sits below the engine, with its PostgreSQL implementation and the
// cluster lease manager, which drives runtimes through an interface; the data plane and the
// wire server beside the adapters, assembled by the broker).
var layers = [][]string{
	{"internal/metadata", "internal/metahash", "internal/assign", "internal/streams/assignor", "internal/streams/topology", "internal/lag"},
	{"internal/coordinator"},
	{"internal/coordinator/txn"},
	{"internal/store", "internal/store/postgres", "internal/cluster"},
	{"internal/coordinator/engine"},
	{"internal/coordinator/coordtest", "internal/coordinator/api", "internal/coordinator/txnapi"},
	{"internal/console"},
	{"internal/broker"},
	{"cmd/muster"},
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// parseDir parses the non-test Go files of one package directory.
func parseDir(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = f
	}
	return out
}

// purityViolations lists what makes a file impure: forbidden imports, calls, go statements,
// channel types and init functions.
func purityViolations(name string, f *ast.File, allow ...string) []string {
	var out []string
	local := map[string]string{} // import name → path
imports:
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		for _, ok := range allow {
			if path == ok {
				continue imports
			}
		}
		for _, bad := range forbiddenImports {
			if path == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(path, bad)) || strings.HasPrefix(path, bad+"/") {
				out = append(out, fmt.Sprintf("%s imports %s", name, path))
				break
			}
		}
		n := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			n = imp.Name.Name
		}
		local[n] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, fmt.Sprintf("%s starts a goroutine", name))
		case *ast.ChanType:
			out = append(out, fmt.Sprintf("%s uses a channel", name))
		case *ast.FuncDecl:
			if n.Recv == nil && n.Name.Name == "init" {
				out = append(out, fmt.Sprintf("%s has an init function", name))
			}
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				for _, fn := range forbiddenCalls[local[id.Name]] {
					if n.Sel.Name == fn {
						out = append(out, fmt.Sprintf("%s calls %s.%s", name, local[id.Name], fn))
					}
				}
			}
		}
		return true
	})
	return out
}

// TestCoordinatorCoreIsPure: the core and the algorithms it uses import no I/O, concurrency,
// randomness or higher layer, never read the clock, start no goroutine and register nothing in
// init.
func TestCoordinatorCoreIsPure(t *testing.T) {
	root := repoRoot(t)
	for _, dir := range pureDirs {
		files := parseDir(t, filepath.Join(root, dir))
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, v := range purityViolations(dir+"/"+n, files[n], allowed[dir]...) {
				t.Error(v)
			}
		}
	}
}

// TestNoInitInCoordinator: wiring in the coordinator is explicit, never init() registration.
func TestNoInitInCoordinator(t *testing.T) {
	root := repoRoot(t)
	for _, dir := range []string{"internal/coordinator/engine", "internal/coordinator/api", "internal/coordinator/coordtest", "internal/coordinator/txnapi"} {
		for n, f := range parseDir(t, filepath.Join(root, dir)) {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
					t.Errorf("%s/%s has an init function", dir, n)
				}
			}
		}
	}
}

// layerOf returns the layer index of a package directory, or -1 when it is not layered.
func layerOf(dir string) int {
	for i, l := range layers {
		for _, d := range l {
			if dir == d {
				return i
			}
		}
	}
	return -1
}

// layerViolations lists the imports of dir that point to a higher layer.
func layerViolations(dir string, files map[string]*ast.File) []string {
	mine := layerOf(dir)
	var out []string
	for n, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(path, module) {
				continue
			}
			if l := layerOf(strings.TrimPrefix(path, module)); l > mine {
				out = append(out, fmt.Sprintf("%s/%s (layer %d) imports %s (layer %d)", dir, n, mine, path, l))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestLayers: no package imports a package of a higher layer.
func TestLayers(t *testing.T) {
	root := repoRoot(t)
	for _, l := range layers {
		for _, dir := range l {
			for _, v := range layerViolations(dir, parseDir(t, filepath.Join(root, dir))) {
				t.Error(v)
			}
		}
	}
}

// The checks themselves catch a violation (a deliberate one, in memory).
func TestChecksCatchViolations(t *testing.T) {
	src := `package coordinator
import (
	"sync"
	"time"
	"github.com/muster-io/muster/internal/coordinator/engine"
)
func init() {}
func f() { go g(); _ = time.Now(); var _ chan int; var _ sync.Mutex; _ = engine.New }
func g() {}
`
	f, err := parser.ParseFile(token.NewFileSet(), "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(purityViolations("bad.go", f), "\n")
	for _, want := range []string{"imports sync", "imports " + module + "internal/coordinator/engine", "starts a goroutine", "calls time.Now", "uses a channel", "has an init function"} {
		if !strings.Contains(got, want) {
			t.Errorf("purity check missed %q in:\n%s", want, got)
		}
	}
	if v := layerViolations("internal/coordinator", map[string]*ast.File{"bad.go": f}); len(v) != 1 {
		t.Errorf("layer check: %v", v)
	}
}
