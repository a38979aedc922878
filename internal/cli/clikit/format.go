package clikit

import (
	"strconv"

	"github.com/spf13/pflag"
)

// Missing is what Kafka's tools print for an absent value.
const Missing = "-"

// OptInt renders v, or Missing when v is nil.
func OptInt(v *int64) string {
	if v == nil {
		return Missing
	}
	return strconv.FormatInt(*v, 10)
}

// Pick returns yes if b, else no (option names in messages).
func Pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// Count returns how many of bs are true.
func Count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// flagNoValue is the NoOptDefVal of an optional-value flag given without a value; --help shows
// it as [="*"] (any).
const flagNoValue = "*"

// OptionalStringFlag registers --name as a flag whose value is optional, like a joptsimple
// withOptionalArg option (Kafka's --state, --type): "--name" alone and "--name=v" both work; read
// it back with OptionalValue.
func OptionalStringFlag(f *pflag.FlagSet, p *string, name, usage string) {
	f.StringVar(p, name, "", usage)
	f.Lookup(name).NoOptDefVal = flagNoValue
}

// OptionalValue reports whether the optional-value flag name was given, and clears *p when it
// was given without a value.
func OptionalValue(f *pflag.FlagSet, p *string, name string) bool {
	if *p == flagNoValue {
		*p = ""
	}
	return f.Changed(name)
}
