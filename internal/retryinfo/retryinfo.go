// Package retryinfo is the one reading and writing of google.rpc.RetryInfo,
// how long a refused caller should wait before trying again: the gRPC error
// table attaches it to a status, and the front ends (the JSON gateway's
// Retry-After, MCP's tool errors) read it back.
package retryinfo

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// With returns st carrying delay as RetryInfo; st itself if it cannot.
func With(st *status.Status, delay time.Duration) *status.Status {
	withRetry, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		return st
	}
	return withRetry
}

// Delay returns the retry delay err's status carries, if any. err is a
// gRPC status error; anything else carries none.
func Delay(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok || st == nil {
		return 0, false
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}
