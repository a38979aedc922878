package tlsconf

import (
	"fmt"
	"regexp"
	"strings"
)

// PrincipalMapper applies ssl.principal.mapping.rules (Kafka's SslPrincipalMapper): a comma list
// of DEFAULT (the DN unchanged) and RULE:pattern/replacement/[LU] entries; the first rule whose
// pattern matches the whole DN gives the name, lower- or upper-cased with L or U.
type PrincipalMapper struct{ rules []mappingRule }

type mappingRule struct {
	isDefault   bool
	re          *regexp.Regexp
	replacement string
	toLower     bool
	toUpper     bool
}

// javaGroupRef matches a Java replacement's group reference ($1), which Go must read as ${1}:
// Go takes "$1x" as a group named "1x".
var javaGroupRef = regexp.MustCompile(`\$(\d+)`)

// ParsePrincipalMapping parses ssl.principal.mapping.rules. Patterns are Java regular
// expressions; one that Go's RE2 cannot compile (back-references, look-around) is an error here,
// at start-up.
func ParsePrincipalMapping(s string) (*PrincipalMapper, error) {
	m := &PrincipalMapper{}
	rest := strings.TrimSpace(s)
	if rest == "" {
		rest = "DEFAULT"
	}
	for rest != "" {
		rest = strings.TrimLeft(rest, " \t\n,")
		if rest == "" {
			break
		}
		switch {
		case strings.HasPrefix(rest, "DEFAULT"):
			m.rules = append(m.rules, mappingRule{isDefault: true})
			rest = rest[len("DEFAULT"):]
		case strings.HasPrefix(rest, "RULE:"):
			body := rest[len("RULE:"):]
			pattern, after, ok := cutUnescaped(body, '/')
			if !ok {
				return nil, fmt.Errorf("ssl.principal.mapping.rules: rule %q lacks /replacement/", rest)
			}
			repl, after, ok := cutUnescaped(after, '/')
			if !ok {
				return nil, fmt.Errorf("ssl.principal.mapping.rules: rule %q lacks a closing /", rest)
			}
			r := mappingRule{replacement: javaGroupRef.ReplaceAllString(repl, "$${$1}")}
			if strings.HasPrefix(after, "L") {
				r.toLower, after = true, after[1:]
			} else if strings.HasPrefix(after, "U") {
				r.toUpper, after = true, after[1:]
			}
			re, err := regexp.Compile("^(?:" + pattern + ")$")
			if err != nil {
				return nil, fmt.Errorf("ssl.principal.mapping.rules: pattern %q: %v", pattern, err)
			}
			r.re = re
			m.rules = append(m.rules, r)
			rest = after
		default:
			return nil, fmt.Errorf("ssl.principal.mapping.rules: invalid rule at %q (want DEFAULT or RULE:pattern/replacement/[LU])", rest)
		}
		rest = strings.TrimLeft(rest, " \t")
		if rest != "" && rest[0] != ',' && rest[0] != '\n' {
			return nil, fmt.Errorf("ssl.principal.mapping.rules: unexpected %q after a rule", rest)
		}
	}
	return m, nil
}

// cutUnescaped splits s at the first sep not preceded by a backslash.
func cutUnescaped(s string, sep byte) (before, after string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Map returns the principal name for dn, or an error when no rule applies.
func (m *PrincipalMapper) Map(dn string) (string, error) {
	for _, r := range m.rules {
		if r.isDefault {
			return dn, nil
		}
		if !r.re.MatchString(dn) {
			continue
		}
		out := r.re.ReplaceAllString(dn, r.replacement)
		switch {
		case r.toLower:
			out = strings.ToLower(out)
		case r.toUpper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("no ssl.principal.mapping.rules rule applies to %q", dn)
}
