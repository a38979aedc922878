package clikit

import "strings"

// The checks and messages both admin commands share (Kafka's option-parser texts).

// ExactlyOneAction checks that exactly one of the action flags (--list, --describe, --delete,
// --reset-offsets, --delete-offsets) was given.
func ExactlyOneAction(given ...bool) error {
	if Count(given...) != 1 {
		return Usagef("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets")
	}
	return nil
}

// CheckGroupScope checks --group and --all-groups: never both, and with requiredBy (an action
// such as "describe") one of them.
func CheckGroupScope(groups []string, all bool, requiredBy string) error {
	if len(groups) > 0 && all {
		return Usagef("Option [group] can't be used along with option [all-groups]")
	}
	if requiredBy != "" && len(groups) == 0 && !all {
		return Usagef("Option [%s] takes one of these options: [all-groups], [group]", requiredBy)
	}
	return nil
}

// CheckOneScenario checks that specs (the reset scenarios given, see Specifiers) hold exactly
// one; fromFile says whether the command offers --from-file.
func CheckOneScenario(specs []string, fromFile bool) error {
	if len(specs) == 0 {
		all := "[to-datetime], [by-duration], [to-earliest], [to-latest], [shift-by], [to-current], [to-offset]"
		if fromFile {
			all = "[to-datetime], [by-duration], [to-earliest], [to-latest], [shift-by], [from-file], [to-current], [to-offset]"
		}
		return Usagef("Option [reset-offsets] requires one of the following scenarios: %s", all)
	}
	if len(specs) > 1 {
		return Usagef("Option [reset-offsets] takes only one of the reset scenarios, got [%s]", strings.Join(specs, "], ["))
	}
	return nil
}
