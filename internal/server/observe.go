package server

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestTiming is what the server knows of one request when its response is written (Kafka's
// RequestChannel.Request timestamps): when the request frame was read, when its handler started
// (after waiting for earlier ordered requests of the connection), when the handler returned and
// when the response was handed to the socket. Times are monotonic clock readings (Mono); 0 means
// not measured.
type RequestTiming struct {
	Key, Version int16
	// Response is what was sent; nil when no response is sent (Produce with acks=0).
	Response                          kmsg.Response
	Received, Started, Finished, Sent time.Duration
}

// monoBase anchors Mono.
var monoBase = time.Now()

// Mono is a monotonic clock reading: the time since the process's first use of this package.
// It costs one monotonic clock read (time.Now reads the wall clock too), which matters on the
// per-request path.
func Mono() time.Duration { return time.Since(monoBase) }

// RequestObserver receives the timing of every request handled (metrics). It is called on the
// connection's goroutines once the response is written and must return promptly.
type RequestObserver interface {
	ObserveRequest(t RequestTiming)
}
