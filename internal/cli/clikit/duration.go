package clikit

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Duration is a java.time.Duration: whole seconds and a nanosecond part in [0, 1e9), so it spans
// what Java's does (far beyond time.Duration's ±292 years).
type Duration struct {
	Seconds int64
	Nanos   int32
}

// isoDuration is java.time.Duration.parse's pattern: PnDTnHnMn.nS with optional signs on the
// whole and on each part, case-insensitive, ASCII digits, '.' or ',' before up to 9 fraction
// digits.
var isoDuration = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// ParseISODuration parses --by-duration exactly as Kafka's tools do with java.time.Duration.parse:
// "PT1H", "P1DT2H3M4.5S", "-PT10M", "PT-1.5S" (a fraction takes the sign of its seconds), "pt1h";
// not "P", "PT", "P1H", "1h" or anything with blanks. Days are 24 hours. Values whose seconds
// overflow a Java long are rejected, as Java does. Negative durations are valid (Kafka then
// resets to offsets after now). A bad value is a *UsageError "Invalid duration '<s>'. Format:
// 'PnDTnHnMnS'".
func ParseISODuration(s string) (Duration, error) {
	bad := Usagef("Invalid duration '%s'. Format: 'PnDTnHnMnS'", s)
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || strings.EqualFold(m[3], "T") || (m[2] == "" && m[4] == "" && m[5] == "" && m[6] == "") {
		return Duration{}, bad
	}
	var secs int64
	for _, part := range []struct {
		digits string
		unit   int64
	}{{m[2], 86400}, {m[4], 3600}, {m[5], 60}, {m[6], 1}} {
		if part.digits == "" {
			continue
		}
		n, err := strconv.ParseInt(part.digits, 10, 64)
		if err != nil {
			return Duration{}, bad
		}
		v, ok := mulExact(n, part.unit)
		if !ok {
			return Duration{}, bad
		}
		if secs, ok = addExact(secs, v); !ok {
			return Duration{}, bad
		}
	}
	var nanos int64
	if f := m[7]; f != "" {
		nanos, _ = strconv.ParseInt((f + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			nanos = -nanos
		}
	}
	d, ok := ofSeconds(secs, nanos)
	if !ok {
		return Duration{}, bad
	}
	if m[1] == "-" {
		if d, ok = d.negated(); !ok {
			return Duration{}, bad
		}
	}
	return d, nil
}

// ofSeconds is Duration.ofSeconds(seconds, nanoAdjustment).
func ofSeconds(secs, nanoAdj int64) (Duration, bool) {
	q, r := nanoAdj/1e9, nanoAdj%1e9
	if r < 0 {
		q, r = q-1, r+1e9
	}
	s, ok := addExact(secs, q)
	return Duration{Seconds: s, Nanos: int32(r)}, ok
}

func (d Duration) negated() (Duration, bool) {
	if d.Seconds == math.MinInt64 {
		return Duration{}, false
	}
	return ofSeconds(-d.Seconds, -int64(d.Nanos))
}

// Java's Instant range, in epoch seconds.
const (
	minInstantSecond = -31557014167219200
	maxInstantSecond = 31556889864403199
)

// MillisBefore returns now minus d in Unix milliseconds, as Kafka computes the --by-duration
// timestamp (Instant.now().minus(duration).toEpochMilli()); ok is false where Java throws (the
// instant or its milliseconds out of range).
func (d Duration) MillisBefore(now time.Time) (int64, bool) {
	secs, ok := subExact(now.Unix(), d.Seconds)
	if !ok {
		return 0, false
	}
	nanos := int64(now.Nanosecond()) - int64(d.Nanos)
	if nanos < 0 {
		if secs, ok = subExact(secs, 1); !ok {
			return 0, false
		}
		nanos += 1e9
	}
	if secs < minInstantSecond || secs > maxInstantSecond {
		return 0, false
	}
	// Instant.toEpochMilli
	if secs < 0 && nanos > 0 {
		ms, ok := mulExact(secs+1, 1000)
		if !ok {
			return 0, false
		}
		return addExact(ms, nanos/1e6-1000)
	}
	ms, ok := mulExact(secs, 1000)
	if !ok {
		return 0, false
	}
	return addExact(ms, nanos/1e6)
}

func addExact(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) != (b >= 0) || (s >= 0) == (a >= 0)
}

func subExact(a, b int64) (int64, bool) {
	s := a - b
	return s, (a >= 0) == (b >= 0) || (s >= 0) == (a >= 0)
}

func mulExact(a, b int64) (int64, bool) {
	r := a * b
	if a == 0 || b == 0 {
		return 0, true
	}
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || r/b != a {
		return 0, false
	}
	return r, true
}
