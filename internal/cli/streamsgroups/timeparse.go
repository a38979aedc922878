package streamsgroups

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

var isoDuration = regexp.MustCompile(`(?i)^P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)(?:[.,]([0-9]{1,9}))?S)?)?$`)

// parseISODuration parses an ISO-8601 duration PnDTnHnMn.nS (days are 24
// hours), as Kafka's --by-duration (java.time.Duration.parse; negative
// durations are rejected by the tool).
func parseISODuration(s string) (time.Duration, error) {
	bad := usagef("Invalid duration '%s'. Format: 'PnDTnHnMnS'", s)
	m := isoDuration.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || strings.EqualFold(s, "P") || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, bad
	}
	var d time.Duration
	units := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	for i, g := range m[1:5] {
		if g == "" {
			continue
		}
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil || n > int64(1<<62)/int64(units[i]) {
			return 0, bad
		}
		d += time.Duration(n) * units[i]
	}
	if m[5] != "" {
		ns, _ := strconv.ParseInt((m[5] + "000000000")[:9], 10, 64)
		d += time.Duration(ns)
	}
	return d, nil
}
