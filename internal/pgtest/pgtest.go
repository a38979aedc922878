// Package pgtest starts a real PostgreSQL server for tests: Debian's postgresql package
// (initdb and pg_ctl from /usr/lib/postgresql/<version>/bin), a fresh cluster in a temporary
// directory, listening on a loopback port only, fsync on. PostgreSQL refuses to run as root, so
// when the tests run as root the server runs as the unprivileged user nobody (setpriv).
//
// A test package starts one server for all its tests (Main in TestMain stops it) and gives each
// test its own database (Server.Database). Without the binaries the tests skip, except in CI
// (CI set), where .ci/run installs the package and a missing server is a failure.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL server.
type Server struct {
	bin  string // directory of initdb, pg_ctl, postgres
	dir  string // root of the temporary directory (data in dir/data)
	Port int
	uid  int // -1: run as the current user
	log  string
	dbs  atomic.Int64
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Main runs a test package's tests and stops the shared server afterwards; use it in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	sharedMu.Lock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
	sharedMu.Unlock()
	return code
}

// Shared returns the package's server, starting it on first use. Without PostgreSQL it skips
// the test, or fails it in CI.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start()
	}
	if sharedErr != nil {
		missing(t, sharedErr)
	}
	return shared
}

func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("PostgreSQL is required in CI (.ci/run installs Debian's postgresql): %v", err)
	}
	t.Skipf("no PostgreSQL server: %v", err)
}

// binDir finds the newest installed server binaries.
func binDir() (string, error) {
	if d := os.Getenv("MUSTER_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("initdb/pg_ctl not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start initializes and starts a new server in a temporary directory.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "muster-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, uid: -1, log: filepath.Join(dir, "server.log")}
	if os.Geteuid() == 0 {
		s.uid = 65534 // nobody: PostgreSQL refuses to run as root
		if err := os.Chown(dir, s.uid, s.uid); err != nil {
			return nil, err
		}
	}
	s.watch()
	if out, err := s.run("initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	conf := strings.Join([]string{
		"listen_addresses = '127.0.0.1'",
		"unix_socket_directories = ''",
		"fsync = on",
		"synchronous_commit = on",
		"max_connections = 300",
		"shared_buffers = 128MB",
		"log_min_messages = warning",
	}, "\n") + "\n"
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	f.WriteString(conf)
	f.Close()
	for try := 0; ; try++ {
		if s.Port, err = freePort(); err != nil {
			return nil, err
		}
		if err = s.startServer(); err == nil {
			return s, nil
		}
		if try == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// watch starts a watchdog process that stops the server and removes its directory once this
// test process is gone, so a test binary killed by a timeout leaves no server behind (pg_ctl
// runs the server detached). It runs in its own process group and exits with the server.
func (s *Server) watch() {
	script := fmt.Sprintf(`while [ -d /proc/%d ]; do sleep 1; done; %s stop -D %s -m immediate >/dev/null 2>&1; rm -rf %s`,
		os.Getpid(), filepath.Join(s.bin, "pg_ctl"), s.data(), s.dir)
	var cmd *exec.Cmd
	if s.uid >= 0 {
		cmd = exec.Command("setpriv", "--reuid="+strconv.Itoa(s.uid), "--regid="+strconv.Itoa(s.uid), "--clear-groups", "sh", "-c", script)
	} else {
		cmd = exec.Command("sh", "-c", script)
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Start() == nil {
		go cmd.Wait() // reap it if it ends while the tests run
	}
}

// run runs one of the server's binaries, as nobody when the tests run as root.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.uid >= 0 {
		cmd = exec.Command("setpriv", append([]string{"--reuid=" + strconv.Itoa(s.uid), "--regid=" + strconv.Itoa(s.uid), "--clear-groups", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.CombinedOutput()
}

func (s *Server) startServer() error {
	out, err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.data(), "-l", s.log, "-o", "-p "+strconv.Itoa(s.Port))
	if err != nil {
		logText, _ := os.ReadFile(s.log)
		return fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, logText)
	}
	return nil
}

// Stop stops the server (fast shutdown) and removes its directory.
func (s *Server) Stop() {
	s.run("pg_ctl", "stop", "-w", "-t", "30", "-m", "fast", "-D", s.data())
	os.RemoveAll(s.dir)
}

// Restart stops the server immediately (in-flight transactions are cut off, as in a crash of
// the database) and, after down, starts it again on the same port.
func (s *Server) Restart(down time.Duration) error {
	if out, err := s.run("pg_ctl", "stop", "-w", "-t", "30", "-m", "immediate", "-D", s.data()); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	time.Sleep(down)
	return s.startServer()
}

// StopNow stops the server immediately without removing it (StartAgain starts it again).
func (s *Server) StopNow() error {
	if out, err := s.run("pg_ctl", "stop", "-w", "-t", "30", "-m", "immediate", "-D", s.data()); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// StartAgain starts a server stopped with StopNow, on the same port.
func (s *Server) StartAgain() error { return s.startServer() }

// URL is the connection URL of database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// Database creates a fresh, empty database and returns its URL.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return s.URL(name)
}

// NewDatabase is Shared(t).Database(t).
func NewDatabase(t testing.TB) string {
	t.Helper()
	return Shared(t).Database(t)
}
