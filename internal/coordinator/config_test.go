package coordinator

import (
	"testing"
	"time"

	"github.com/muster-io/muster/internal/config"
)

// TestOffsetsRetentionConfig: offsets.retention.ms wins over offsets.retention.minutes;
// offsets.retention.check.interval.ms sets the sweep period.
func TestOffsetsRetentionConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 7 * 24 * time.Hour},
		{[]string{"offsets.retention.minutes=3"}, 3 * time.Minute},
		{[]string{"offsets.retention.minutes=3", "offsets.retention.ms=250"}, 250 * time.Millisecond},
		{[]string{"offsets.retention.ms=250"}, 250 * time.Millisecond},
	} {
		v, err := config.Parse(nil, append(tc.args, "offsets.retention.check.interval.ms=1234"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := ConfigFrom(v)
		if cfg.Offsets.Retention != tc.want || cfg.Offsets.RetentionCheck != 1234*time.Millisecond {
			t.Errorf("%v: retention %v check %v, want %v and 1.234s", tc.args, cfg.Offsets.Retention, cfg.Offsets.RetentionCheck, tc.want)
		}
	}
}
