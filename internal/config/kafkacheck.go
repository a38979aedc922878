package config

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// KafkaCheck validates value for d the way Kafka's ConfigDef.parseType and the key's validator
// do, and returns Kafka's ConfigException message ("Invalid value <v> for configuration
// <name>: <detail>"), or "" when the value is valid. The admin APIs (CreateTopics, AlterConfigs,
// IncrementalAlterConfigs) answer with these messages.
func (d *Def) KafkaCheck(value string) string {
	v := strings.TrimSpace(value)
	bad := func(shown, detail string) string {
		return "Invalid value " + shown + " for configuration " + d.Name + ": " + detail
	}
	switch d.Kind {
	case Int, Long:
		bits, typ := 32, "INT"
		if d.Kind == Long {
			bits, typ = 64, "LONG"
		}
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return bad(value, "Not a number of type "+typ)
		}
		if d.Min != nil && n < *d.Min {
			return bad(strconv.FormatInt(n, 10), "Value must be at least "+strconv.FormatInt(*d.Min, 10))
		}
		if d.Max != nil && n > *d.Max {
			return bad(strconv.FormatInt(n, 10), "Value must be no more than "+strconv.FormatInt(*d.Max, 10))
		}
		if d.Check != nil {
			if msg := d.Check(v); msg != "" {
				return bad(strconv.FormatInt(n, 10), msg)
			}
		}
	case Double:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return bad(value, "Not a number of type DOUBLE")
		}
		if d.FMin != nil && f < *d.FMin {
			return bad(javaDouble(f), "Value must be at least "+javaNumber(*d.FMin))
		}
		if d.FMax != nil && f > *d.FMax {
			return bad(javaDouble(f), "Value must be no more than "+javaNumber(*d.FMax))
		}
	case Bool:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return bad(value, "Expected value to be either true or false")
		}
	case String:
		if len(d.OneOf) > 0 && !contains(d.OneOf, v) {
			return bad(v, "String must be one of: "+strings.Join(d.OneOf, ", "))
		}
		if d.Check != nil {
			if msg := d.Check(v); msg != "" {
				return bad(v, msg)
			}
		}
	case List:
		for _, e := range KafkaList(v) {
			if len(d.OneOf) > 0 && !contains(d.OneOf, e) {
				return bad(e, "String must be one of: "+strings.Join(d.OneOf, ", "))
			}
		}
		if d.Check != nil {
			if msg := d.Check(v); msg != "" {
				return bad(v, msg)
			}
		}
	}
	return ""
}

var commaWithWhitespace = regexp.MustCompile(`\s*,\s*`)

// KafkaList splits a LIST value as Kafka's ConfigDef does: trimmed, split on commas with the
// whitespace around them, empty elements kept; an empty value is an empty list.
func KafkaList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	return commaWithWhitespace.Split(v, -1)
}

// javaDouble formats f as Java's Double.toString does for the values config messages show.
func javaDouble(f float64) string {
	a := math.Abs(f)
	if a == 0 || a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+08
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// javaNumber formats a bound the way Kafka prints the Number it was declared with (integral
// bounds are declared as integers).
func javaNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return javaDouble(f)
}
