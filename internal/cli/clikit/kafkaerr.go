package clikit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// kafkaMessages are Kafka's Errors messages where franz-go's kerr description differs.
var kafkaMessages = map[int16]string{
	kerr.GroupSubscribedToTopic.Code: "The consumer group is actively subscribed to the topic",
}

// kafkaText is the message of the exception Kafka's client raises for ke without a broker
// message: the Errors default message.
func kafkaText(ke *kerr.Error) string {
	if m, ok := kafkaMessages[ke.Code]; ok {
		return m
	}
	return ke.Description
}

// BrokerError is a Kafka error code answered together with the broker's error message (the
// ErrorMessage field of a response), as Kafka's client turns it into an exception carrying that
// message.
type BrokerError struct {
	Err     *kerr.Error
	Message string // "" when the broker sent none
}

// NewBrokerError returns err with the broker message msg (nil or "" for none), nil for no error.
func NewBrokerError(code int16, msg *string) error {
	ke, _ := kerr.ErrorForCode(code).(*kerr.Error)
	if ke == nil {
		return kerr.ErrorForCode(code) // nil, or an unknown code's generic error
	}
	be := &BrokerError{Err: ke}
	if msg != nil {
		be.Message = *msg
	}
	return be
}

func (e *BrokerError) Error() string {
	if e.Message == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Message
}

func (e *BrokerError) Unwrap() error { return e.Err }

// ErrMessage is the text Kafka's tools print for err (what the Java exception's getMessage
// gives): the broker's message for a BrokerError that has one, Kafka's message for a Kafka error
// code (also when wrapped), else err.Error().
func ErrMessage(err error) string {
	if err == nil {
		return ""
	}
	var be *BrokerError
	if errors.As(err, &be) && be.Message != "" {
		return be.Message
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return kafkaText(ke)
	}
	return err.Error()
}

// DeleteErrText renders a per-group DeleteGroups error as Kafka's tools print the exception:
// "ERROR_NAME: message", the broker's message when it sent one, else Kafka's.
func DeleteErrText(err error, brokerMsg string) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	if brokerMsg == "" {
		brokerMsg = ErrMessage(err)
	}
	return ke.Message + ": " + brokerMsg
}

// PrintError prints "Error: <formatted>" and a newline on w (Kafka's printError, minus the
// leading blank line).
func PrintError(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "Error: "+format+"\n", args...)
}

// Reportf prints "Error: <formatted>" on w and returns a *ReportedError with that message.
func Reportf(w io.Writer, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	PrintError(w, "%s", msg)
	return &ReportedError{Msg: msg}
}

// GroupFailure is one group a multi-group action failed for, with the text printed for it.
type GroupFailure struct {
	Group string `json:"group"`
	Error string `json:"error"`
}

// ReportDeleteGroups prints the outcome of --delete as Kafka's tools do, kind being "consumer"
// or "streams": on success "Deletion of requested <kind> groups ('g1, g2') was successful." on
// stdout; otherwise "Error: Deletion of some <kind> groups failed:" and one "* Group 'g' could not
// be deleted due to: <error>" line per failure on stderr, then the groups that were deleted on
// stdout. quiet leaves stdout alone (another format, e.g. JSON, reports there). It returns nil
// or a *ReportedError.
func ReportDeleteGroups(stdout, stderr io.Writer, kind string, deleted []string, failed []GroupFailure, quiet bool) error {
	if len(failed) == 0 {
		if !quiet {
			fmt.Fprintf(stdout, "Deletion of requested %s groups ('%s') was successful.\n", kind, strings.Join(deleted, ", "))
		}
		return nil
	}
	PrintError(stderr, "Deletion of some %s groups failed:", kind)
	for _, f := range failed {
		fmt.Fprintf(stderr, "* Group '%s' could not be deleted due to: %s\n", f.Group, f.Error)
	}
	if len(deleted) > 0 && !quiet {
		fmt.Fprintf(stdout, "These %s groups were deleted successfully: '%s'\n", kind, strings.Join(deleted, "', '"))
	}
	return &ReportedError{Msg: fmt.Sprintf("deletion of %d %s groups failed", len(failed), kind)}
}
