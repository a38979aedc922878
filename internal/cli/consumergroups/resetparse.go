package consumergroups

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/muster-io/muster/internal/cli/clikit"
)

// resetPlan is a --from-file plan: group ("" for the 3-column format) to
// partition offsets.
type resetPlan map[string]map[clikit.TopicPartition]int64

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
			plan[group] = map[clikit.TopicPartition]int64{}
		}
		plan[group][clikit.TopicPartition{Topic: f[0], Partition: int32(p)}] = off
	}
	return plan, sc.Err()
}
