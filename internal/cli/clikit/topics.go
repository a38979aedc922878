package clikit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TopicPartition is one partition of a topic.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// SortTopicPartitions orders tps by topic, then partition.
func SortTopicPartitions(tps []TopicPartition) {
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
}

// TopicArg is one --topic (consumer-groups) or --input-topic (streams-groups) value.
type TopicArg struct {
	Topic string
	// Partitions is nil for a whole topic ("t") and the listed partitions otherwise ("t:0,1");
	// "t:," lists none, as in Kafka.
	Partitions []int32
}

// Whole reports whether the argument names the whole topic (no partition list).
func (a TopicArg) Whole() bool { return a.Partitions == nil }

// ParseTopicArgs parses topic arguments exactly as Kafka's tools do (OffsetsUtils
// .parseTopicsWithPartitions, shared by ConsumerGroupCommand and StreamsGroupCommand): an
// argument without ':' is a whole topic; one with ':' must split (String.split, trailing empty
// parts dropped) into exactly a topic and a partition list, so "t:" and "t:1:2" are rejected with
// "Invalid topic arg 't:', expected topic name and partitions"; each comma-separated partition is
// a Java int (Integer.parseInt: optional sign, digits, no blanks; only ASCII digits here), else "Invalid partition
// 'x' specified in topic arg 't:x" followed by two single quotes (the doubled quote is Kafka's).
// A bad argument is a *UsageError.
func ParseTopicArgs(args []string) ([]TopicArg, error) {
	var out []TopicArg
	for _, a := range args {
		if !strings.Contains(a, ":") {
			out = append(out, TopicArg{Topic: a})
			continue
		}
		parts := JavaSplit(a, ":")
		if len(parts) != 2 {
			return nil, Usagef("Invalid topic arg '%s', expected topic name and partitions", a)
		}
		ta := TopicArg{Topic: parts[0], Partitions: []int32{}}
		for _, p := range JavaSplit(parts[1], ",") {
			n, ok := parseJavaInt(p)
			if !ok {
				return nil, Usagef("Invalid partition '%s' specified in topic arg '%s''", p, a)
			}
			ta.Partitions = append(ta.Partitions, n)
		}
		out = append(out, ta)
	}
	return out, nil
}

// JavaSplit splits s around every sep like Java's String.split with a literal separator: trailing
// empty strings are dropped (so "a,b," gives [a b] and "," gives none), and an s without sep
// gives [s] (also for "").
func JavaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// parseJavaInt parses s as Integer.parseInt does: an optional '+' or '-', then one or more ASCII
// digits, within int32.
func parseJavaInt(s string) (int32, bool) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if len(s)-len(digits) > 1 || digits == "" || strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil
}

// ParseNameList parses a comma-separated list of names (group states or types) as Kafka's tools
// do: split like String.split, each item trimmed and matched case-insensitively against valid
// (GroupState.parse, GroupType.parse); the result holds valid's spelling, each name once, in the
// order given. An unknown item fails the whole list with "Invalid <what> list '<in>'. Valid
// <what>s are: <valid, comma-separated>" as a *UsageError; what is "state" or "types" (Kafka's
// wording: "Invalid state list", "Invalid types list").
func ParseNameList(in string, valid []string, what string) ([]string, error) {
	var out []string
	for _, s := range JavaSplit(in, ",") {
		c := Canonical(strings.TrimSpace(s), valid)
		if c == "" {
			return nil, Usagef("Invalid %s list '%s'. Valid %s are: %s", what, in, plural(what), strings.Join(valid, ", "))
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func plural(what string) string {
	if strings.HasSuffix(what, "s") {
		return what
	}
	return what + "s"
}

// Canonical returns the entry of valid equal to s ignoring case, or "".
func Canonical(s string, valid []string) string {
	for _, v := range valid {
		if strings.EqualFold(s, v) {
			return v
		}
	}
	return ""
}

// PartitionsOfTopicArgs expands validated --topic style arguments ("t" or "t:0,1") into
// partitions, listing every partition of a topic named whole (one that does not exist is an
// error with Kafka's tool text); sorted, without duplicates.
func PartitionsOfTopicArgs(ctx context.Context, adm *kadm.Client, topicArgs []string) ([]TopicPartition, error) {
	args, err := ParseTopicArgs(topicArgs)
	if err != nil {
		return nil, err
	}
	var out []TopicPartition
	var whole []string
	for _, a := range args {
		if a.Whole() {
			whole = append(whole, a.Topic)
		}
		for _, p := range a.Partitions {
			out = append(out, TopicPartition{Topic: a.Topic, Partition: p})
		}
	}
	if len(whole) > 0 {
		md, err := adm.ListTopics(ctx, whole...)
		if err != nil {
			return nil, err
		}
		for _, t := range whole {
			td, ok := md[t]
			if !ok || td.Err != nil {
				return nil, fmt.Errorf("topic '%s' does not exist", t)
			}
			for p := range td.Partitions {
				out = append(out, TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	SortTopicPartitions(out)
	return slices.Compact(out), nil
}
