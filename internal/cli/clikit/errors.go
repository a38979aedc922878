// Package clikit holds what the muster admin commands (consumer-groups, streams-groups) share, so
// the two cannot drift apart: the exit and usage error types and their printing, Kafka's error
// texts (ErrMessage, DeleteErrText), the connection flags (--bootstrap-server, --command-config,
// --timeout, --verbose) and the franz-go admin client built from them, the --command-config
// properties loader, and the parsers of Kafka's tools (topic arguments "t:0,1", ISO-8601
// --by-duration, --to-datetime, state and type lists, optional-value flags), the shared option
// checks, and Kafka's fixed-width table rows.
package clikit

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// ExitError is returned by a command's RunE for every failure. Code is the
// process exit code the root command should use (always 1 today: usage
// errors and runtime errors alike, like Kafka's tools since KAFKA-19537).
// The message has already been printed on the command's stderr.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// UsageError is a bad invocation; printed as "Error: msg" plus a usage hint.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError with the formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// IsUsageError reports whether err is a *UsageError (not wrapped).
func IsUsageError(err error) bool {
	_, ok := err.(*UsageError)
	return ok
}

// ReportedError marks a failure whose messages were already printed to
// stderr (for example per-group errors in a multi-group describe).
type ReportedError struct{ Msg string }

func (e *ReportedError) Error() string { return e.Msg }

// ToExitError prints err on stderr the way Kafka's tools do and converts it
// to an *ExitError: a usage error as "Error: msg" plus "Run '<cmdPath>
// --help' for usage."; a reported error silently; anything else as
// "Error: <failedPrefix><errMessage(err)>".
func ToExitError(stderr io.Writer, cmdPath, failedPrefix string, errMessage func(error) string, err error) *ExitError {
	var ue *UsageError
	var re *ReportedError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "Error: %s\nRun '%s --help' for usage.\n", ue.Msg, cmdPath)
		return &ExitError{Code: 1, Msg: ue.Msg}
	case errors.As(err, &re):
		return &ExitError{Code: 1, Msg: re.Msg}
	default:
		msg := failedPrefix + errMessage(err)
		if errors.Is(err, context.DeadlineExceeded) {
			msg += " (no answer within --timeout: is --bootstrap-server a reachable Kafka listener?)"
		}
		fmt.Fprintf(stderr, "Error: %s\n", msg)
		return &ExitError{Code: 1, Msg: msg}
	}
}

// Wire makes cmd report failures the way Kafka's tools do: a flag parse
// error is a usage error, and run's error goes through ToExitError with
// failedPrefix and errMessage; RunE then returns the *ExitError.
func Wire(cmd *cobra.Command, failedPrefix string, errMessage func(error) string, run func(c *cobra.Command, args []string) error) {
	toExit := func(c *cobra.Command, err error) error {
		return ToExitError(c.ErrOrStderr(), c.CommandPath(), failedPrefix, errMessage, err)
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return toExit(c, Usagef("%s", err.Error()))
	})
	cmd.RunE = func(c *cobra.Command, args []string) error {
		err := run(c, args)
		if err == nil {
			return nil
		}
		return toExit(c, err)
	}
}
