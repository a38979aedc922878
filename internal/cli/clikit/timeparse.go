package clikit

import "time"

// ParseDateTime parses --to-datetime like Kafka's Utils.getDateTime:
// yyyy-MM-ddTHH:mm:ss[.SSS] with an optional zone (Z, +hh, +hhmm, +hh:mm); a
// value without zone is read in loc. It returns Unix milliseconds; a bad value
// is a *UsageError.
func ParseDateTime(s string, loc *time.Location) (int64, error) {
	for _, l := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z07",
		"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	for _, l := range []string{"2006-01-02T15:04:05.000", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, Usagef("Error parsing timestamp '%s'. Format: 'YYYY-MM-DDTHH:mm:SS.sss'", s)
}
