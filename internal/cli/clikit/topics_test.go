package clikit

import (
	"reflect"
	"testing"
)

func TestParseTopicArgs(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []TopicArg
	}{
		{[]string{"t"}, []TopicArg{{Topic: "t"}}},
		{[]string{"t:0,1,2"}, []TopicArg{{Topic: "t", Partitions: []int32{0, 1, 2}}}},
		{[]string{"a", "b:3"}, []TopicArg{{Topic: "a"}, {Topic: "b", Partitions: []int32{3}}}},
		// Java's String.split drops trailing empty parts: "t:1," is partition 1 and "t:," none.
		{[]string{"t:1,"}, []TopicArg{{Topic: "t", Partitions: []int32{1}}}},
		{[]string{"t:,"}, []TopicArg{{Topic: "t", Partitions: []int32{}}}},
		// Integer.parseInt takes a sign; the broker answers for a partition that does not exist.
		{[]string{"t:+1,-1"}, []TopicArg{{Topic: "t", Partitions: []int32{1, -1}}}},
		{[]string{"t:2147483647"}, []TopicArg{{Topic: "t", Partitions: []int32{2147483647}}}},
		{[]string{"t.with-dots_and_underscores:0"}, []TopicArg{{Topic: "t.with-dots_and_underscores", Partitions: []int32{0}}}},
	} {
		got, err := ParseTopicArgs(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseTopicArgs(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if a, _ := ParseTopicArgs([]string{"t", "t:,"}); !a[0].Whole() || a[1].Whole() {
		t.Errorf("Whole: %+v", a)
	}
	for in, msg := range map[string]string{
		"t:":           "Invalid topic arg 't:', expected topic name and partitions",
		"t::":          "Invalid topic arg 't::', expected topic name and partitions",
		"t:1:2":        "Invalid topic arg 't:1:2', expected topic name and partitions",
		":":            "Invalid topic arg ':', expected topic name and partitions",
		"t:x":          "Invalid partition 'x' specified in topic arg 't:x''",
		"t:1,,2":       "Invalid partition '' specified in topic arg 't:1,,2''",
		"t:,1":         "Invalid partition '' specified in topic arg 't:,1''",
		"t: 1":         "Invalid partition ' 1' specified in topic arg 't: 1''",
		"t:1 ":         "Invalid partition '1 ' specified in topic arg 't:1 ''",
		"t:+-1":        "Invalid partition '+-1' specified in topic arg 't:+-1''",
		"t:-":          "Invalid partition '-' specified in topic arg 't:-''",
		"t:2147483648": "Invalid partition '2147483648' specified in topic arg 't:2147483648''",
	} {
		_, err := ParseTopicArgs([]string{"ok", in})
		if !IsUsageError(err) || err.Error() != msg {
			t.Errorf("ParseTopicArgs(%q) = %v, want usage error %q", in, err, msg)
		}
	}
}

func TestJavaSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"":      {""},
		"a":     {"a"},
		"a,b":   {"a", "b"},
		"a,,b":  {"a", "", "b"},
		"a,b,,": {"a", "b"},
		",a":    {"", "a"},
		",":     {},
		",,,":   {},
	} {
		if got := JavaSplit(in, ","); !reflect.DeepEqual(got, want) {
			t.Errorf("JavaSplit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseNameList(t *testing.T) {
	valid := []string{"Empty", "NotReady", "Stable"}
	for in, want := range map[string][]string{
		"stable":                {"Stable"},
		" Stable , EMPTY ":      {"Stable", "Empty"},
		"notready,NotReady":     {"NotReady"},
		"Stable,":               {"Stable"}, // trailing empty part dropped, as String.split does
		"empty,stable,notready": {"Empty", "Stable", "NotReady"},
	} {
		got, err := ParseNameList(in, valid, "state")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseNameList(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "bogus", "Stable,,Empty", "not_ready", "Not Ready", ","} {
		_, err := ParseNameList(in, valid, "state")
		want := "Invalid state list '" + in + "'. Valid states are: Empty, NotReady, Stable"
		if in == "," { // splits into nothing: an empty, valid list, as in Kafka
			if err != nil {
				t.Errorf("ParseNameList(%q): %v", in, err)
			}
			continue
		}
		if !IsUsageError(err) || err.Error() != want {
			t.Errorf("ParseNameList(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := ParseNameList("share", []string{"Consumer", "Classic"}, "types"); err == nil || err.Error() != "Invalid types list 'share'. Valid types are: Consumer, Classic" {
		t.Errorf("types: %v", err)
	}
}
