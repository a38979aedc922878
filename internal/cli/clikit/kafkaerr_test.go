package clikit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestErrMessage(t *testing.T) {
	msg := "group g is not a streams group"
	empty := ""
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{kerr.GroupIDNotFound, kerr.GroupIDNotFound.Description},
		{fmt.Errorf("fetching committed offset of t-0: %w", kerr.GroupIDNotFound), kerr.GroupIDNotFound.Description},
		{kerr.GroupSubscribedToTopic, "The consumer group is actively subscribed to the topic"},
		{NewBrokerError(kerr.GroupIDNotFound.Code, &msg), msg},
		{NewBrokerError(kerr.GroupIDNotFound.Code, &empty), kerr.GroupIDNotFound.Description},
		{NewBrokerError(kerr.GroupIDNotFound.Code, nil), kerr.GroupIDNotFound.Description},
		{errors.New("dial tcp: refused"), "dial tcp: refused"},
	} {
		if got := ErrMessage(tc.err); got != tc.want {
			t.Errorf("ErrMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if NewBrokerError(0, &msg) != nil {
		t.Error("error code 0 is no error")
	}
	if err := NewBrokerError(kerr.GroupIDNotFound.Code, &msg); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("%v does not unwrap to GROUP_ID_NOT_FOUND", err)
	}
}

func TestDeleteErrText(t *testing.T) {
	if got := DeleteErrText(kerr.NonEmptyGroup, ""); got != "NON_EMPTY_GROUP: "+kerr.NonEmptyGroup.Description {
		t.Errorf("without broker message: %q", got)
	}
	if got := DeleteErrText(kerr.NonEmptyGroup, "The group is not empty."); got != "NON_EMPTY_GROUP: The group is not empty." {
		t.Errorf("with broker message: %q", got)
	}
	if got := DeleteErrText(errors.New("boom"), "x"); got != "boom" {
		t.Errorf("plain error: %q", got)
	}
}
