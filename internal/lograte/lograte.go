// Package lograte bounds repeated log lines: the first line of a kind is logged, the repeats
// that follow are counted, and one summary line with the count is logged per interval while they
// go on. A disk that stays full makes Pebble report the same failure thousands of times a
// second; the log keeps one line per interval instead.
package lograte

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// maxKeys bounds the kinds tracked at once; the least recently seen kinds are forgotten first.
const maxKeys = 256

// Limiter decides which lines of a log are written. Lines of one kind share a key (see Key). It
// is safe for concurrent use.
type Limiter struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	seen map[string]*entry
}

type entry struct {
	level      slog.Level
	msg        string // the latest line of the kind
	attrs      []any
	suppressed int       // repeats not logged since the last line
	since      time.Time // when the last line of the kind was logged
	last       time.Time // when the kind was last seen
}

// New returns a Limiter that writes to log and summarises repeats every interval.
func New(log *slog.Logger, every time.Duration) *Limiter {
	if log == nil {
		log = slog.Default()
	}
	return &Limiter{log: log, every: every, now: time.Now, seen: map[string]*entry{}}
}

// Key is the kind of msg: msg with every run of digits replaced by '#', so that lines that
// differ only in file numbers, offsets or counts are one kind.
func Key(msg string) string {
	var b strings.Builder
	digits := false
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteByte(c)
	}
	return b.String()
}

// Log writes msg at level unless a line of the same kind (Key(msg)) was written less than an
// interval ago; then it only counts it. The first line after an interval carries the count of
// the lines left out ("repeated").
func (l *Limiter) Log(level slog.Level, msg string, attrs ...any) {
	l.LogKey(Key(msg), level, msg, attrs...)
}

// LogKey is Log with the kind given by the caller.
func (l *Limiter) LogKey(key string, level slog.Level, msg string, attrs ...any) {
	now := l.now()
	l.mu.Lock()
	e, ok := l.seen[key]
	if !ok {
		if len(l.seen) >= maxKeys {
			l.evictLocked()
		}
		l.seen[key] = &entry{level: level, msg: msg, since: now, last: now}
		l.mu.Unlock()
		l.log.Log(context.Background(), level, msg, attrs...)
		return
	}
	e.last = now
	if now.Sub(e.since) < l.every {
		e.level, e.msg, e.attrs = level, msg, attrs
		e.suppressed++
		l.mu.Unlock()
		return
	}
	n, from := e.suppressed, e.since
	e.suppressed, e.since, e.attrs = 0, now, nil
	l.mu.Unlock()
	if n > 0 {
		attrs = append(attrs, "repeated", n, "in", now.Sub(from).Round(time.Second).String())
	}
	l.log.Log(context.Background(), level, msg, attrs...)
}

// Flush writes the summary of every kind whose repeats were left out for at least an interval,
// so that a burst that stopped is still counted. Call it periodically.
func (l *Limiter) Flush() {
	now := l.now()
	type line struct {
		level slog.Level
		msg   string
		attrs []any
	}
	var out []line
	l.mu.Lock()
	for k, e := range l.seen {
		if e.suppressed > 0 && now.Sub(e.since) >= l.every {
			attrs := append(append([]any(nil), e.attrs...), "repeated", e.suppressed, "in", now.Sub(e.since).Round(time.Second).String())
			out = append(out, line{e.level, e.msg, attrs})
			e.suppressed, e.since, e.attrs = 0, now, nil
		}
		if e.suppressed == 0 && now.Sub(e.last) > 10*l.every {
			delete(l.seen, k)
		}
	}
	l.mu.Unlock()
	for _, ln := range out {
		l.log.Log(context.Background(), ln.level, ln.msg, ln.attrs...)
	}
}

// evictLocked forgets the least recently seen kind.
func (l *Limiter) evictLocked() {
	var oldest string
	var at time.Time
	for k, e := range l.seen {
		if oldest == "" || e.last.Before(at) {
			oldest, at = k, e.last
		}
	}
	delete(l.seen, oldest)
}
