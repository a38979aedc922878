package console

import (
	"sync"
	"time"

	"github.com/muster-io/muster/internal/data"
)

// rates samples every partition's high watermark to show produce rates (records per second
// between the last two samples at least rateSpan apart).
type rates struct {
	mu            sync.Mutex
	prev          map[string][]int64 // topic → high watermarks at prevAt
	cur           map[string][]int64
	prevAt, curAt time.Time
	// perSec is the rate of each partition between prev and cur.
	perSec map[string][]float64
}

const rateSpan = 5 * time.Second

func newRates() *rates { return &rates{perSec: map[string][]float64{}} }

func (r *rates) sample(p *data.Plane, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.curAt.IsZero() && now.Sub(r.curAt) < rateSpan {
		return
	}
	hws := map[string][]int64{}
	for _, t := range p.Topics() {
		st, ok := p.TopicStats(t.Name)
		if !ok {
			continue
		}
		hw := make([]int64, len(st))
		for i, s := range st {
			hw[i] = s.HighWatermark
		}
		hws[t.Name] = hw
	}
	r.prev, r.prevAt = r.cur, r.curAt
	r.cur, r.curAt = hws, now
	r.perSec = map[string][]float64{}
	if r.prev == nil {
		return
	}
	dt := r.curAt.Sub(r.prevAt).Seconds()
	if dt <= 0 {
		return
	}
	for t, hw := range r.cur {
		old := r.prev[t]
		out := make([]float64, len(hw))
		for i := range hw {
			if i < len(old) && hw[i] >= old[i] {
				out[i] = float64(hw[i]-old[i]) / dt
			}
		}
		r.perSec[t] = out
	}
}

// topic returns the rate of each partition of a topic (nil before two samples).
func (r *rates) topic(name string) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.perSec[name]
}
