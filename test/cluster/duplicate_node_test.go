package cluster_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/pgtest"
)

// TestClusterDuplicateNodeIDWaits: a second process with the node.id of a live node waits to
// join, /readyz says so (not a generic "opening the store"), and SIGTERM ends the wait at once.
func TestClusterDuplicateNodeIDWaits(t *testing.T) {
	url := pgtest.NewDatabase(t)
	first := newNode(t, url, 1)
	first.start()
	defer first.stop()

	dup := newNode(t, url, 1)
	dup.launch()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, msg := dup.readyz()
		if code == 503 && strings.Contains(msg, "joining the cluster as node 1") {
			break
		}
		if code == 200 {
			t.Fatalf("a second live node 1 became ready:\n%s", dup.out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz of the waiting node: %d %q", code, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	dup.signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- dup.cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("an interrupted start-up exited 0")
		}
		if !strings.Contains(dup.out.String(), "interrupted during start-up") {
			t.Fatalf("no start-up interruption in the output:\n%s", dup.out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("SIGTERM did not end the wait within 5 s (the start-up grace is 10 s)")
	}
}
