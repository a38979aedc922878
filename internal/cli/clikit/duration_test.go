package clikit

import (
	"math"
	"testing"
	"time"
)

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]Duration{
		"PT1H":                     {Seconds: 3600},
		"pt10m":                    {Seconds: 600},
		"P1DT2H3M4S":               {Seconds: 93784},
		"P2D":                      {Seconds: 172800},
		"PT0.5S":                   {Nanos: 5e8},
		"PT1,25S":                  {Seconds: 1, Nanos: 25e7},
		"PT1.S":                    {Seconds: 1}, // an empty fraction is allowed, as in Java
		"PT0.000000001S":           {Nanos: 1},
		"-PT1M":                    {Seconds: -60},
		"+PT1M":                    {Seconds: 60},
		"PT-1.5S":                  {Seconds: -2, Nanos: 5e8}, // the fraction takes the seconds' sign
		"-PT-1H":                   {Seconds: 3600},
		"P-1DT24H":                 {Seconds: 0},
		"PT-0.5S":                  {Seconds: -1, Nanos: 5e8},
		"-PT0.5S":                  {Seconds: -1, Nanos: 5e8},
		"PT9223372036854775807S":   {Seconds: math.MaxInt64},
		"P106751991167300D":        {Seconds: 106751991167300 * 86400},
		"PT9223372036854775807.5S": {Seconds: math.MaxInt64, Nanos: 5e8},
	} {
		got, err := ParseISODuration(in)
		if err != nil || got != want {
			t.Errorf("ParseISODuration(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "-P", "P1H", "PT1D", "1h", "PT1X", " PT1H", "PT1H ", "P1DT", "PT1.1234567891S",
		"PT.5S", "P1M", "P1Y", "PT1H1H", "PT1S1M",
		"PT9223372036854775808S",   // beyond a long
		"P106751991167301D",        // days × 86400 overflow a long
		"PT9223372036854775807S1",  // junk after
		"P1DT9223372036854775807S", // sum overflow
	} {
		_, err := ParseISODuration(in)
		want := "Invalid duration '" + in + "'. Format: 'PnDTnHnMnS'"
		if !IsUsageError(err) || err.Error() != want {
			t.Errorf("ParseISODuration(%q) = %v, want usage error %q", in, err, want)
		}
	}
	if d, err := ParseISODuration("-PT9223372036854775807S"); err != nil || d.Seconds != -math.MaxInt64 {
		t.Errorf("negated max: %+v %v", d, err)
	}
}

func TestDurationMillisBefore(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 10, 250_000_000, time.UTC)
	for in, want := range map[string]int64{
		"PT10S":   now.Add(-10 * time.Second).UnixMilli(),
		"-PT10S":  now.Add(10 * time.Second).UnixMilli(),
		"PT0.3S":  now.Add(-300 * time.Millisecond).UnixMilli(),
		"P365D":   now.Add(-365 * 24 * time.Hour).UnixMilli(),
		"P36500D": now.UnixMilli() - 36500*86400*1000, // beyond time.Duration's range, within Java's
	} {
		d, err := ParseISODuration(in)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := d.MillisBefore(now); !ok || got != want {
			t.Errorf("%s before %v = %d, %v; want %d", in, now, got, ok, want)
		}
	}
	// Before the epoch with a fraction: Instant.toEpochMilli rounds toward negative infinity.
	epoch := time.Unix(0, 0)
	if d, _ := ParseISODuration("PT0.0005S"); true {
		if got, ok := d.MillisBefore(epoch); !ok || got != -1 {
			t.Errorf("0.5 ms before the epoch = %d, %v; want -1", got, ok)
		}
	}
	// Beyond Java's Instant range: an error, as Java throws.
	for _, in := range []string{"PT9223372036854775807S", "-PT9223372036854775807S", "P106751991167300D"} {
		d, _ := ParseISODuration(in)
		if _, ok := d.MillisBefore(now); ok {
			t.Errorf("%s: no error", in)
		}
	}
}
