package server

import (
	"testing"
	"time"
)

// TestDecodeBudget: a reservation above the budget is capped at the whole budget (it runs
// alone), and a reservation that does not fit waits for a release.
func TestDecodeBudget(t *testing.T) {
	var b budget
	b.init(100)
	if got := b.acquire(1000); got != 100 {
		t.Fatalf("oversized reservation got %d, want the whole budget 100", got)
	}
	acquired := make(chan int64)
	go func() { acquired <- b.acquire(10) }()
	select {
	case <-acquired:
		t.Fatal("reservation granted while the budget was exhausted")
	case <-time.After(20 * time.Millisecond):
	}
	b.release(100)
	if got := <-acquired; got != 10 {
		t.Fatalf("got %d, want 10", got)
	}
	b.release(10)
	if b.used != 0 {
		t.Fatalf("used %d after all releases", b.used)
	}
}
