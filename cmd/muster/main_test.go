package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/config"
)

// TestMain lets the test binary run muster's main as a child process (MUSTER_AS_MAIN=1), so the
// tests below exercise `muster serve` exactly as an operator runs it.
func TestMain(m *testing.M) {
	if os.Getenv("MUSTER_AS_MAIN") == "1" {
		os.Args = append([]string{"muster"}, os.Args[2:]...) // drop the -test.run=^$ guard
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// muster returns a child process running `muster args...`.
func muster(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), "MUSTER_AS_MAIN=1")
	return cmd
}

const exampleConfig = "../../config/server.properties"

// TestServeWithExampleConfig starts `muster serve --config config/server.properties` on a
// loopback port, waits until it accepts connections and stops it with SIGTERM: the example file
// is accepted and the broker stops cleanly.
func TestServeWithExampleConfig(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := muster("serve", "--config", exampleConfig, "--listen", addr, "--data-dir", t.TempDir(), "--http-listen", "", "--log-level", "warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("muster serve exited during start-up: %v\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("muster serve did not listen on %s within 30s:\n%s", addr, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("muster serve after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("muster serve did not stop within 30s of SIGTERM:\n%s", stderr.String())
	}
}

// TestServeRejectsUnknownKey: a key muster does not know stops start-up with exit 1.
func TestServeRejectsUnknownKey(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.properties")
	if err := os.WriteFile(bad, []byte("node.id=0\nno.such.key=1\nnum.partitions=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := muster("serve", "--config", bad, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--http-listen", "").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	for _, want := range []string{"no.such.key: unknown config key", "num.partitions"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestExampleConfigShowsDefaults keeps config/server.properties from rotting: every key in it,
// active or commented out ("# key=value"), is a key muster reads, uncommenting all of them still
// parses, and each value shown is muster's default.
func TestExampleConfigShowsDefaults(t *testing.T) {
	f, err := os.Open(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	commented := regexp.MustCompile(`^# ([a-z][a-z0-9.]*=.*)$`)
	defaults := map[string]string{}
	for _, d := range config.Defs {
		defaults[d.Name] = d.Default
	}
	// Keys shown with an example value rather than the default.
	examples := map[string]bool{"advertised.listeners": true, "listeners": true, "log.dirs": true, "log.retention.minutes": true, "log.retention.ms": true, "log.roll.ms": true, "log.roll.jitter.ms": true, "log.flush.interval.ms": true}
	var all strings.Builder
	keys := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := commented.FindStringSubmatch(line); m != nil {
			line = m[1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("not key=value: %q", line)
			continue
		}
		keys++
		def, known := defaults[k]
		switch {
		case !known:
			t.Errorf("%s: not a key muster reads", k)
		case v != def && !examples[k]:
			t.Errorf("%s=%s: muster's default is %q", k, v, def)
		}
		all.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if keys < len(config.Defs)-2 {
		t.Errorf("the example shows %d keys of %d", keys, len(config.Defs))
	}
	if _, err := config.Parse(strings.NewReader(all.String()), nil); err != nil {
		t.Errorf("the example with every line uncommented does not parse:\n%v", err)
	}
}
