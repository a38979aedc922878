package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Process is a broker child process on a loopback port.
type Process struct {
	Target
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	logMu  sync.Mutex
	log    bytes.Buffer
}

// StartMuster runs `bin serve` on a free loopback port with dataDir, its HTTP listener on
// another free loopback port (Target.HTTP) and the default durable store (every acknowledged commit is fsynced), and waits until it answers
// ApiVersions. extra are additional serve flags (e.g. --override key=value).
func StartMuster(ctx context.Context, bin, dataDir string, extra ...string) (*Process, error) {
	return StartMusterNamed(ctx, "muster", bin, dataDir, extra...)
}

// StartMusterNamed is StartMuster for a target of another name (the baseline muster).
func StartMusterNamed(ctx context.Context, name, bin, dataDir string, extra ...string) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	hport, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	http := net.JoinHostPort("127.0.0.1", strconv.Itoa(hport))
	args := append([]string{"serve", "--listen", addr, "--data-dir", dataDir, "--http-listen", http, "--log-level", "warn"}, extra...)
	p, err := start(ctx, name, addr, bin, args...)
	if p != nil {
		p.HTTP = http
	}
	return p, err
}

// StartKfake runs a kfake-serve binary (cmd/kfake-serve) on a free loopback port and waits until
// it answers ApiVersions.
func StartKfake(ctx context.Context, bin string) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return start(ctx, "kfake", addr, bin, "--listen", addr)
}

// BuildKfake compiles cmd/kfake-serve into dir with the go tool; it must run inside the muster
// module (the source tree).
func BuildKfake(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "kfake-serve", "--kfake-bin")
}

// BuildMuster compiles cmd/muster into dir with the go tool; it must run inside the muster module
// (the source tree).
func BuildMuster(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "muster", "--muster-bin")
}

// build compiles github.com/muster-io/muster/cmd/<name> into dir/<name>; flag names the option
// that passes a prebuilt binary instead.
func build(ctx context.Context, dir, name, flag string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/muster-io/muster/cmd/"+name)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s (run inside the muster source tree, or pass %s): %v\n%s", name, flag, err, b)
	}
	return out, nil
}

func start(ctx context.Context, name, addr, bin string, args ...string) (*Process, error) {
	p := &Process{Target: Target{Name: name, Addr: addr}, bin: bin, args: args}
	if err := p.spawn(); err != nil {
		return nil, err
	}
	if err := p.waitAPI(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// spawn starts the child (again) with the process's binary and arguments.
func (p *Process) spawn() error {
	p.exited = make(chan struct{})
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Stdout = &lockedWriter{p}
	p.cmd.Stderr = &lockedWriter{p}
	p.cmd.SysProcAttr = childAttr()
	// kfake-serve exits when its stdin closes, i.e. when we do.
	if _, err := p.cmd.StdinPipe(); err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.Pid, p.Target.proc = p.cmd.Process.Pid, p
	exited, cmd := p.exited, p.cmd
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return nil
}

// waitAPI waits up to 60 s until the child answers ApiVersions (stopping it on failure).
func (p *Process) waitAPI(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := apiKeys(actx, p.Addr)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during start-up: %s", p.Name, p.Output())
		case <-ctx.Done():
			p.Stop()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return fmt.Errorf("%s did not answer ApiVersions on %s within 60s: %s", p.Name, p.Addr, p.Output())
		}
	}
}

// Restart stops the child (SIGTERM) and starts it again with the same arguments (same ports,
// same data dir). It returns once the child runs; callers wait for readiness themselves.
func (p *Process) Restart() error {
	p.Stop()
	return p.spawn()
}

// Exited is closed when the current child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Output is what the child wrote to stdout and stderr so far.
func (p *Process) Output() string {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return p.log.String()
}

// Stop sends SIGTERM and waits up to 15 s, then kills the child.
func (p *Process) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

type lockedWriter struct{ p *Process }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.p.logMu.Lock()
	defer w.p.logMu.Unlock()
	if w.p.log.Len() < 1<<20 {
		w.p.log.Write(b)
	}
	return len(b), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
