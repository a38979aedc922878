package console

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Paging bounds: pages are at most maxPageSize rows, so every page renders in bounded time
// whatever the size of the group or topic.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
	maxPage         = 10_000_000
	maxNameLen      = 1024
)

// query validates a request's query parameters: only the allowed ones, each at most once.
type query struct {
	v url.Values
}

func parseQuery(raw string, allowed ...string) (query, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return query{}, badf("malformed query string: " + err.Error())
	}
	for k, vs := range v {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			if len(allowed) == 0 {
				return query{}, badf(fmt.Sprintf("unknown parameter %q (this endpoint takes none)", k))
			}
			return query{}, badf(fmt.Sprintf("unknown parameter %q (allowed: %s)", k, strings.Join(allowed, ", ")))
		}
		if len(vs) > 1 {
			return query{}, badf(fmt.Sprintf("parameter %q given %d times", k, len(vs)))
		}
	}
	return query{v}, nil
}

func (q query) str(name string) string { return q.v.Get(name) }

// intIn parses an integer parameter in [lo, hi], def when absent.
func (q query) intIn(name string, lo, hi, def int) (int, error) {
	s, ok := q.v[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s[0])
	if err != nil {
		return 0, badf(fmt.Sprintf("parameter %q: %q is not an integer", name, s[0]))
	}
	if n < lo || n > hi {
		return 0, badf(fmt.Sprintf("parameter %q: %d is out of range [%d, %d]", name, n, lo, hi))
	}
	return n, nil
}

// paging reads page and size (prefix: "" or e.g. "m" for mpage/msize).
func (q query) paging(prefix string) (page, size int, err error) {
	if page, err = q.intIn(prefix+"page", 1, maxPage, 1); err != nil {
		return 0, 0, err
	}
	size, err = q.intIn(prefix+"size", 1, maxPageSize, defaultPageSize)
	return page, size, err
}

// boolean parses a boolean parameter (true/false/1/0), def when absent.
func (q query) boolean(name string, def bool) (bool, error) {
	s, ok := q.v[name]
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(s[0])
	if err != nil {
		return false, badf(fmt.Sprintf("parameter %q: %q is not a boolean", name, s[0]))
	}
	return b, nil
}

// oneOf parses an enumerated parameter (case-insensitive), "" when absent.
func (q query) oneOf(name string, values ...string) (string, error) {
	s, ok := q.v[name]
	if !ok {
		return "", nil
	}
	for _, v := range values {
		if strings.EqualFold(s[0], v) {
			return v, nil
		}
	}
	return "", badf(fmt.Sprintf("parameter %q: %q is not one of %s", name, s[0], strings.Join(values, ", ")))
}

// checkName validates a group id or topic name taken from the path.
func checkName(what, s string) error {
	switch {
	case s == "":
		return badf(what + " is empty")
	case len(s) > maxNameLen:
		return badf(fmt.Sprintf("%s is longer than %d bytes", what, maxNameLen))
	case !utf8.ValidString(s):
		return badf(what + " is not valid UTF-8")
	}
	return nil
}

// groupStates are the states ListGroups may name, for the state filter.
var groupStates = []string{"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead",
	"Assigning", "Reconciling", "NotReady"}

var groupTypes = []string{"classic", "consumer", "streams", "share"}

// isUnavailable reports a coordinator that is loading or moving.
func isUnavailable(err error) bool {
	return errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.CoordinatorNotAvailable) ||
		errors.Is(err, kerr.NotCoordinator)
}
