package lograte

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	a := Key("pebble: background error: write /d/pebble/004783.sst: no space left on device")
	b := Key("pebble: background error: write /d/pebble/4784.sst: no space left on device")
	if a != b {
		t.Fatalf("%q != %q", a, b)
	}
	if Key("disk a") == Key("disk b") {
		t.Fatal("different words share a key")
	}
}

// TestLimiter: 10,000 identical lines in one interval write one line; the next interval's first
// line carries the count; Flush reports a burst that stopped.
func TestLimiter(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), 10*time.Second)
	l.now = func() time.Time { return now }
	for i := 0; i < 10000; i++ {
		l.Log(slog.LevelError, "write 0000"+string(rune('0'+i%10))+".sst: no space left on device")
		now = now.Add(time.Millisecond)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("%d lines for 10,000 repeats in one interval:\n%s", n, buf.String())
	}
	now = now.Add(10 * time.Second)
	l.Log(slog.LevelError, "write 000001.sst: no space left on device")
	out := buf.String()
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "repeated=9999") {
		t.Fatalf("want the first line and one summary of 9999 repeats:\n%s", out)
	}
	l.Log(slog.LevelError, "write 000002.sst: no space left on device")
	l.Log(slog.LevelWarn, "another kind")
	now = now.Add(11 * time.Second)
	l.Flush()
	out = buf.String()
	if n := strings.Count(out, "\n"); n != 4 || !strings.Contains(out, "repeated=1") {
		t.Fatalf("Flush did not report the stopped burst:\n%s", out)
	}
	l.Flush()
	if n := strings.Count(buf.String(), "\n"); n != 4 {
		t.Fatalf("a second Flush wrote again:\n%s", buf.String())
	}
}
