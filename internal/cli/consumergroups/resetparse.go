package consumergroups

import (
	"bufio"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var isoDuration = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(?:T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// parseISODuration parses an ISO-8601 duration as java.time.Duration.parse
// does: [-]PnDTnHnMn.nS (days are 24 hours).
func parseISODuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || strings.EqualFold(strings.TrimLeft(s, "+-"), "P") || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, usagef("Invalid duration '%s'. Format: 'PnDTnHnMnS'", s)
	}
	var total float64
	unit := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	for i, g := range m[2:6] {
		if g == "" {
			continue
		}
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			return 0, usagef("Invalid duration '%s'. Format: 'PnDTnHnMnS'", s)
		}
		total += float64(n) * float64(unit[i])
	}
	if frac := m[6]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[5], "-") {
			ns = -ns
		}
		total += float64(ns)
	}
	if m[1] == "-" {
		total = -total
	}
	if math.Abs(total) > math.MaxInt64 {
		return 0, usagef("Invalid duration '%s': out of range", s)
	}
	return time.Duration(total), nil
}

// resetPlan is a --from-file plan: group ("" for the 3-column format) to
// partition offsets.
type resetPlan map[string]map[topicPartition]int64

// parseResetPlan reads Kafka's export CSV: "topic,partition,offset" lines
// (single group) or "group,topic,partition,offset" lines. Blank lines are
// skipped; a line with another column count is an error.
func parseResetPlan(rd io.Reader) (resetPlan, error) {
	plan := resetPlan{}
	sc := bufio.NewScanner(rd)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		group := ""
		switch len(f) {
		case 3:
		case 4:
			group, f = f[0], f[1:]
		default:
			return nil, usagef("Invalid reset plan line %d '%s': expected topic,partition,offset or group,topic,partition,offset", n, line)
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || f[0] == "" || p < 0 {
			return nil, usagef("Invalid reset plan line %d '%s'", n, line)
		}
		if plan[group] == nil {
			plan[group] = map[topicPartition]int64{}
		}
		plan[group][topicPartition{f[0], int32(p)}] = off
	}
	return plan, sc.Err()
}
