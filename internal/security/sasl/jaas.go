package sasl

import (
	"fmt"
	"strings"
)

// JAAS is one login module entry of a sasl.jaas.config value:
// `<class> required|requisite|sufficient|optional (key="value")* ;`.
type JAAS struct {
	Class   string
	Flag    string
	Options map[string]string
}

// ParseJAAS parses a sasl.jaas.config value (Kafka's JaasConfig: exactly one login module).
// Values may be quoted (with \" and \\ escapes) or bare words.
func ParseJAAS(s string) (JAAS, error) {
	p := &jaasParser{s: s}
	var j JAAS
	j.Class = p.word()
	if j.Class == "" {
		return j, fmt.Errorf("sasl.jaas.config: missing login module class")
	}
	j.Flag = p.word()
	switch j.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return j, fmt.Errorf("sasl.jaas.config: want a control flag (required, requisite, sufficient, optional) after %s, got %q", j.Class, j.Flag)
	}
	j.Options = map[string]string{}
	for {
		p.space()
		if p.eof() {
			return j, fmt.Errorf("sasl.jaas.config: missing ';' at the end")
		}
		if p.s[p.i] == ';' {
			p.i++
			p.space()
			if !p.eof() {
				return j, fmt.Errorf("sasl.jaas.config: only one login module is allowed")
			}
			return j, nil
		}
		k := p.word()
		p.space()
		if k == "" || p.eof() || p.s[p.i] != '=' {
			return j, fmt.Errorf("sasl.jaas.config: want key=value at %q", p.rest())
		}
		p.i++
		p.space()
		v, err := p.value()
		if err != nil {
			return j, err
		}
		j.Options[k] = v
	}
}

// PlainUsers returns the user_<name>="<password>" options of a PlainLoginModule entry.
func (j JAAS) PlainUsers() map[string]string {
	users := map[string]string{}
	for k, v := range j.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
			users[name] = v
		}
	}
	return users
}

type jaasParser struct {
	s string
	i int
}

func (p *jaasParser) eof() bool    { return p.i >= len(p.s) }
func (p *jaasParser) rest() string { return p.s[p.i:] }

func (p *jaasParser) space() {
	for !p.eof() && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jaasParser) word() string {
	p.space()
	start := p.i
	for !p.eof() && strings.IndexByte(" \t\r\n=;\"", p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *jaasParser) value() (string, error) {
	if p.eof() {
		return "", fmt.Errorf("sasl.jaas.config: missing value")
	}
	if p.s[p.i] != '"' {
		return p.word(), nil
	}
	p.i++
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if p.eof() {
				return "", fmt.Errorf("sasl.jaas.config: dangling escape")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case '"':
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("sasl.jaas.config: unterminated quoted value")
}
