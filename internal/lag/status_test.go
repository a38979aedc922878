package lag

import "testing"

// TestEvaluate walks Burrow's rules (its evaluator's test cases in spirit) with windows of
// commits one second apart.
func TestEvaluate(t *testing.T) {
	w := func(pairs ...int64) []Observation { // offset, lag, offset, lag, ...
		var out []Observation
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Observation{Offset: pairs[i], Lag: pairs[i+1], At: int64(i/2) * 1000})
		}
		return out
	}
	const now = 9000 // the last of 10 commits was at 9000: span 9 s
	for _, c := range []struct {
		name   string
		win    []Observation
		ends   []int64
		lag    int64
		now    int64
		status Status
	}{
		{"no lag now", w(0, 5, 1, 5, 2, 5), nil, 0, now, StatusOK},
		{"lag zero once in the window", w(0, 5, 10, 0, 11, 3), nil, 3, 2000, StatusOK},
		{"falling behind: offsets advance, lag grows", w(0, 5, 10, 6, 20, 7, 30, 8), nil, 8, 3000, StatusWarning},
		{"keeping up: lag decreases somewhere", w(0, 5, 10, 6, 20, 4, 30, 8), nil, 8, 3000, StatusOK},
		{"stalled: same offset, lag", w(7, 5, 7, 6, 7, 9), nil, 9, 2000, StatusStall},
		{"rewind", w(10, 5, 20, 5, 5, 20), nil, 20, 2000, StatusRewind},
		{"stopped: silent longer than the window spans", w(0, 5, 10, 6, 20, 4), nil, 4, 2000 + 2001, StatusStop},
		{"stopped but caught up recently", w(0, 5, 10, 6, 20, 4), []int64{30, 20}, 4, 5000, StatusOK},
		{"stop outranks rewind", w(10, 5, 5, 10), nil, 10, 1000 + 1001, StatusStop},
		{"one commit, just now", w(3, 5), nil, 5, 0, StatusOK},
		{"one commit, then silence", w(3, 5), nil, 5, 1, StatusStop},
		{"unknown lags are skipped by the trend", w(0, -1, 10, 6, 20, 7), nil, 7, 2000, StatusWarning},
	} {
		if got := Evaluate(c.win, c.ends, c.lag, c.now); got != c.status {
			t.Errorf("%s: %v, want %v", c.name, got, c.status)
		}
	}
}

func TestFold(t *testing.T) {
	s := StatusOK
	for _, p := range []Status{StatusOK, StatusWarning} {
		s = Fold(s, p)
	}
	if s != StatusWarning {
		t.Fatalf("OK+WARNING = %v", s)
	}
	for _, p := range []Status{StatusStop, StatusStall, StatusRewind} {
		if got := Fold(StatusWarning, p); got != StatusError {
			t.Errorf("WARNING+%v = %v, want ERROR", p, got)
		}
	}
}

func TestWindow(t *testing.T) {
	var w window
	for i := int64(0); i < 15; i++ {
		w.add(Observation{Offset: i, At: i * 1000}, 10, 500, 0)
	}
	got := w.appendTo(nil, 0)
	if len(got) != 10 || got[0].Offset != 5 || got[9].Offset != 14 {
		t.Fatalf("window %v", got)
	}
	// Closer than min-distance: replaces the newest.
	w.add(Observation{Offset: 15, At: 14_200}, 10, 500, 0)
	got = w.appendTo(nil, 0)
	if len(got) != 10 || got[9].Offset != 15 || got[8].Offset != 13 {
		t.Fatalf("window after a close commit %v", got)
	}
	// Older than the newest: dropped.
	w.add(Observation{Offset: 1, At: 1}, 10, 500, 0)
	if l, _ := w.last(0); l.Offset != 15 {
		t.Fatalf("late commit kept: %v", l)
	}
}
