package coordinator

import (
	"regexp"
	"regexp/syntax"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// compileSubscriptionRegex compiles a SubscribedTopicRegex with full-match semantics (the
// whole topic name must match, as Java's Matcher.matches does), RE2 syntax. The regex must
// compile as given (as RE2/J's Pattern.compile in Kafka): one that only parses once wrapped,
// such as "a)|(b", is invalid.
func compileSubscriptionRegex(re string) (*regexp.Regexp, error) {
	if len(re) > 32767 {
		return nil, errRegexTooLong
	}
	if _, err := syntax.Parse(re, syntax.Perl); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + re + ")$")
}

type regexError string

func (e regexError) Error() string { return string(e) }

const errRegexTooLong = regexError("regular expression too long")

// validateSubscriptionRegex answers INVALID_REGULAR_EXPRESSION with Kafka's message
// (Utils.throwIfRegularExpressionIsInvalid), whose detail is RE2/J's description of the error:
// RE2's error text without the pattern ("missing closing ]").
func validateSubscriptionRegex(re string) error {
	if _, err := compileSubscriptionRegex(re); err != nil {
		desc := err.Error()
		if se, ok := err.(*syntax.Error); ok {
			desc = se.Code.String()
		}
		return Errf(kerr.InvalidRegularExpression, "SubscribedTopicRegex `%s` is not a valid regular expression: %s.", re, desc)
	}
	return nil
}

// resolveRegex lists the existing topics the regex matches that describable allows (nil: all),
// sorted.
func resolveRegex(st *State, re string, describable func(string) bool) []string {
	out := []string{}
	rx, err := compileSubscriptionRegex(re)
	if err != nil || st.Image == nil {
		return out
	}
	for _, name := range st.Image.TopicNames() {
		if rx.MatchString(name) && (describable == nil || describable(name)) {
			out = append(out, name)
		}
	}
	return out
}

// regexInUse reports whether a member subscribes with re.
func (g *ConsumerGroup) regexInUse(re string) bool { return g.regexRefs[re] > 0 }

func regexRefreshInterval(st *State) time.Duration { return st.Cfg.Consumer.RegexRefreshInterval }

// refreshRegexes resolves regexes in use that are unresolved, stale (older than
// group.consumer.regex.refresh.interval.ms) or due for a refresh after a topic change, writes a
// ConsumerGroupRegularExpression record for each whose topics changed (or that is new) and
// tombstones regexes no member uses any more. It reports whether a resolution changed. Every
// regex of the group resolves to the topics that describable allows: the ACLs of the member
// whose request triggered the refresh, as Kafka does (nil: all topics).
func (g *ConsumerGroup) refreshRegexes(st *State, force bool, describable func(string) bool) bool {
	changed := false
	inUse := make(map[string]bool, len(g.regexRefs))
	for re := range g.regexRefs {
		inUse[re] = true
	}
	for _, re := range sortedKeys(g.regexes) {
		if !inUse[re] {
			st.Write(Record{Key: cgRegexKey(g.id, re)})
			changed = true
		}
	}
	interval := regexRefreshInterval(st)
	for _, re := range sortedKeys(inUse) {
		old := g.regexes[re]
		if old != nil && !force && st.Now.Sub(time.UnixMilli(old.timestamp)) < interval {
			continue
		}
		topics := resolveRegex(st, re, describable)
		r := &consumerRegex{topics: topics, timestamp: st.Now.UnixMilli()}
		if old != nil {
			r.version = old.version
			if equalStrings(old.topics, topics) {
				if old.timestamp != r.timestamp {
					r.version = old.version
					g.writeRegex(st, re, r) // refresh the resolution time only
				}
				continue
			}
			r.version = old.version + 1
		}
		g.writeRegex(st, re, r)
		changed = true
	}
	return changed
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
