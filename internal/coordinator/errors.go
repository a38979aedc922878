package coordinator

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func wrapCorrupt(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrCorruptRecord, what, err)
}

// MessageError is a kerr error with a human message, as Kafka's ErrorMessage fields carry.
type MessageError struct {
	Err     *kerr.Error
	Message string
}

func (e *MessageError) Error() string { return e.Err.Message + ": " + e.Message }
func (e *MessageError) Unwrap() error { return e.Err }

// Errf builds a MessageError.
func Errf(code *kerr.Error, format string, args ...any) error {
	return &MessageError{Err: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the Kafka error code of err (0 for nil, UNKNOWN_SERVER_ERROR for non-kerr
// errors).
func ErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// ErrorMessage returns the message for an ErrorMessage field: the MessageError text, or nil.
func ErrorMessage(err error) *string {
	var me *MessageError
	if errors.As(err, &me) {
		s := me.Message
		return &s
	}
	return nil
}

// JoinGroupError is the JoinGroup response for a call that failed before the group answered.
func JoinGroupError(req *kmsg.JoinGroupRequest, err error) *kmsg.JoinGroupResponse {
	return joinError(nil, req, err, req.MemberID)
}

// SyncGroupError is the SyncGroup response for a call that failed before the group answered.
func SyncGroupError(req *kmsg.SyncGroupRequest, err error) *kmsg.SyncGroupResponse {
	resp := syncError(nil, err)
	resp.Version = req.Version
	return resp
}

// ConsumerGroupHeartbeatError is the ConsumerGroupHeartbeat response for a call that failed
// before the group answered.
func ConsumerGroupHeartbeatError(req *kmsg.ConsumerGroupHeartbeatRequest, err error) *kmsg.ConsumerGroupHeartbeatResponse {
	return cgHeartbeatError(req, err)
}

// StreamsGroupHeartbeatError is the StreamsGroupHeartbeat response for a call that failed before
// the group answered.
func StreamsGroupHeartbeatError(req *kmsg.StreamsGroupHeartbeatRequest, err error) *kmsg.StreamsGroupHeartbeatResponse {
	return streamsHeartbeatError(req, err)
}
