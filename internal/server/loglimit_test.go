package server

import (
	"testing"
	"time"
)

func TestLogLimiter(t *testing.T) {
	var l logLimiter
	t0 := time.Unix(100, 0)
	for i := 0; i < badInputLogLimit; i++ {
		if ok, _ := l.allow(t0); !ok {
			t.Fatalf("line %d refused", i)
		}
	}
	for i := 0; i < 5; i++ {
		if ok, _ := l.allow(t0.Add(100 * time.Millisecond)); ok {
			t.Fatal("line over the limit allowed")
		}
	}
	ok, suppressed := l.allow(t0.Add(time.Second))
	if !ok || suppressed != 5 {
		t.Fatalf("next second: ok=%v suppressed=%d, want true 5", ok, suppressed)
	}
}
