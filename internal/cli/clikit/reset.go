package clikit

import (
	"time"

	"github.com/spf13/pflag"
)

// ResetScenario is the --reset-offsets scenario flags both admin commands take.
type ResetScenario struct {
	ToEarliest, ToLatest, ToCurrent bool
	ToOffset, ShiftBy               int64
	ToOffsetSet, ShiftBySet         bool   // the flag was given (Finish)
	ToDatetime, ByDuration          string // "" = not given
}

// AddFlags registers --to-earliest, --to-latest, --to-current, --to-offset,
// --shift-by (with shiftByHelp), --to-datetime and --by-duration on f, in
// that order.
func (r *ResetScenario) AddFlags(f *pflag.FlagSet, shiftByHelp string) {
	f.BoolVar(&r.ToEarliest, "to-earliest", false, "Reset offsets to earliest offset.")
	f.BoolVar(&r.ToLatest, "to-latest", false, "Reset offsets to latest offset.")
	f.BoolVar(&r.ToCurrent, "to-current", false, "Reset offsets to current offset.")
	f.Int64Var(&r.ToOffset, "to-offset", 0, "Reset offsets to a specific offset.")
	f.Int64Var(&r.ShiftBy, "shift-by", 0, shiftByHelp)
	f.StringVar(&r.ToDatetime, "to-datetime", "", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss' with optional zone.")
	f.StringVar(&r.ByDuration, "by-duration", "", "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'.")
}

// Finish records which of the valued scenario flags were given on f.
func (r *ResetScenario) Finish(f *pflag.FlagSet) {
	r.ToOffsetSet = f.Changed("to-offset")
	r.ShiftBySet = f.Changed("shift-by")
}

// Specifiers names the scenarios given, in flag order (Kafka's messages
// list them this way).
func (r *ResetScenario) Specifiers() []string {
	var s []string
	add := func(b bool, name string) {
		if b {
			s = append(s, name)
		}
	}
	add(r.ToEarliest, "to-earliest")
	add(r.ToLatest, "to-latest")
	add(r.ToCurrent, "to-current")
	add(r.ToOffsetSet, "to-offset")
	add(r.ShiftBySet, "shift-by")
	add(r.ToDatetime != "", "to-datetime")
	add(r.ByDuration != "", "by-duration")
	return s
}

// CheckTimes validates the values of --by-duration and --to-datetime.
func (r *ResetScenario) CheckTimes() error {
	if r.ByDuration != "" {
		if _, err := ParseISODuration(r.ByDuration); err != nil {
			return err
		}
	}
	if r.ToDatetime != "" {
		if _, err := ParseDateTime(r.ToDatetime, time.UTC); err != nil {
			return err
		}
	}
	return nil
}

// Target is the new offset of one partition for the scenario given: start and
// end are the partition's log start and end, cur the current offset when
// hasCur, byTime the offset found for --to-datetime/--by-duration (negative when
// none). The result is clamped to [start, end]; ok is false for --shift-by
// without a current offset.
func (r *ResetScenario) Target(start, end, cur int64, hasCur bool, byTime int64) (target int64, ok bool) {
	switch {
	case r.ToEarliest:
		target = start
	case r.ToLatest:
		target = end
	case r.ToCurrent:
		target = end
		if hasCur {
			target = cur
		}
	case r.ToOffsetSet:
		target = r.ToOffset
	case r.ShiftBySet:
		if !hasCur {
			return 0, false
		}
		target = cur + r.ShiftBy
	default: // --to-datetime / --by-duration
		target = end
		if byTime >= 0 {
			target = byTime
		}
	}
	return min(max(target, start), end), true
}
