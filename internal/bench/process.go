package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Process is a broker child process on a loopback port.
type Process struct {
	Target
	cmd    *exec.Cmd
	exited chan struct{}
	logMu  sync.Mutex
	log    bytes.Buffer
}

// StartMuster runs `bin serve` on a free loopback port with dataDir, no HTTP listener and the
// default durable store (every acknowledged commit is fsynced), and waits until it answers
// ApiVersions. extra are additional serve flags (e.g. --override key=value).
func StartMuster(ctx context.Context, bin, dataDir string, extra ...string) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := append([]string{"serve", "--listen", addr, "--data-dir", dataDir, "--http-listen", "", "--log-level", "warn"}, extra...)
	return start(ctx, "muster", addr, bin, args...)
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
	out := dir + "/kfake-serve"
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/muster-io/muster/cmd/kfake-serve")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building kfake-serve (run inside the muster source tree, or pass --kfake-bin): %v\n%s", err, b)
	}
	return out, nil
}

func start(ctx context.Context, name, addr, bin string, args ...string) (*Process, error) {
	p := &Process{Target: Target{Name: name, Addr: addr}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout = &lockedWriter{p}
	p.cmd.Stderr = &lockedWriter{p}
	p.cmd.SysProcAttr = childAttr()
	// kfake-serve exits when its stdin closes, i.e. when we do.
	if _, err := p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := apiKeys(actx, addr)
		cancel()
		if err == nil {
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited during start-up: %s", name, p.Output())
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s did not answer ApiVersions on %s within 60s: %s", name, addr, p.Output())
		}
	}
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

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
