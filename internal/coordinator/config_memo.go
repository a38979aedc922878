package coordinator

import (
	"sync/atomic"

	"github.com/muster-io/muster/internal/config"
)

// cfgMemo caches a value derived from broker config Values, per Values object (Values never
// change after they are built), so that hot paths (every heartbeat) do not look up and parse
// config keys each time. Safe for concurrent shards: the last derived value is swapped
// atomically; a miss just derives it again.
type cfgMemo[T any] struct {
	last atomic.Pointer[cfgMemoEntry[T]]
}

type cfgMemoEntry[T any] struct {
	v   *config.Values
	val T
}

func (m *cfgMemo[T]) get(v *config.Values, derive func(*config.Values) T) T {
	if e := m.last.Load(); e != nil && e.v == v {
		return e.val
	}
	val := derive(v)
	m.last.Store(&cfgMemoEntry[T]{v: v, val: val})
	return val
}
