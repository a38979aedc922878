package broker

import (
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// quietPebbleLogger routes Pebble's log lines to slog at debug level (errors at error level).
type quietPebbleLogger struct{ l *slog.Logger }

func (q quietPebbleLogger) Infof(format string, args ...any) {
	q.l.Debug("pebble: " + fmt.Sprintf(format, args...))
}
func (q quietPebbleLogger) Errorf(format string, args ...any) {
	q.l.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (q quietPebbleLogger) Fatalf(format string, args ...any) {
	q.l.Error("pebble fatal: " + fmt.Sprintf(format, args...))
	panic(fmt.Sprintf(format, args...))
}

func apiName(k int16) string { return kmsg.NameForKey(k) }
