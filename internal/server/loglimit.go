package server

import (
	"sync"
	"time"
)

// badInputLogLimit bounds how many bad-input lines the server logs per second: a client spraying
// garbage must not flood the log. Every bad frame is still counted in Stats.BadFrames (the
// muster_bad_frames_total metric); the first line after a quiet spell says how many were
// suppressed.
const badInputLogLimit = 10

type logLimiter struct {
	mu         sync.Mutex
	second     time.Time
	n          int
	suppressed int
}

// allow reports whether a line may be logged now, and how many were suppressed before it.
func (l *logLimiter) allow(now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := now.Truncate(time.Second); !s.Equal(l.second) {
		l.second, l.n = s, 0
	}
	if l.n >= badInputLogLimit {
		l.suppressed++
		return false, 0
	}
	l.n++
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}
