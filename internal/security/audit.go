package security

import (
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// auditLimit bounds the denial lines logged per second; the first line after a burst says how
// many were suppressed. Every denial is still counted in the denial metric.
const auditLimit = 20

// auditLog writes one line per denied action that named its resource explicitly (Kafka's
// StandardAuthorizerData.logAuditMessage at INFO; filters such as ListGroups and all-topics
// Metadata are not logged).
type auditLog struct {
	log        *slog.Logger
	mu         sync.Mutex
	second     time.Time
	n          int
	suppressed int
}

func (l *auditLog) denied(s *Session, a Action, rule *Binding) {
	if l == nil || l.log == nil {
		return
	}
	l.mu.Lock()
	now := time.Now().Truncate(time.Second)
	if !now.Equal(l.second) {
		l.second, l.n = now, 0
	}
	if l.n >= auditLimit {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.n++
	suppressed := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	ruleText := "DefaultDeny"
	if rule != nil {
		ruleText = "MatchingAcl(" + rule.String() + ")"
	}
	args := []any{
		"principal", s.PrincipalString(), "operation", a.Op.String(), "host", s.ClientHost,
		"resource", a.Type.String() + ":LITERAL:" + a.Name, "request", kmsg.NameForKey(a.API),
		"listener", s.Listener, "rule", ruleText,
	}
	if suppressed > 0 {
		args = append(args, "suppressed_since_last", suppressed)
	}
	l.log.Info("authorization denied", args...)
}
