// Package errorinfo is the one reading and writing of google.rpc.ErrorInfo,
// the machine-readable reason of a failure whose code alone does not say
// what a client should do: the gRPC error table attaches it to a status,
// and the front ends read it back (the JSON gateway's HTTP status).
package errorinfo

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
)

// Domain is the ErrorInfo domain of skillsvc's reasons.
const Domain = "skillsvc"

// The reasons.
const (
	// StorageFull: object storage has no room for the write (disk full,
	// a bucket quota). RESOURCE_EXHAUSTED like a per-user limit, but no
	// wait fixes it: an operator must make room, so HTTP answers 507, not
	// 429.
	StorageFull = "STORAGE_FULL"
)

// With returns st carrying reason as ErrorInfo; st itself if it cannot.
func With(st *status.Status, reason string) *status.Status {
	with, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: Domain})
	if err != nil {
		return st
	}
	return with
}

// Reason returns the reason of Domain err's status carries, if any. err is
// a gRPC status error; anything else carries none.
func Reason(err error) (string, bool) {
	st, ok := status.FromError(err)
	if !ok || st == nil {
		return "", false
	}
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == Domain {
			return ei.GetReason(), true
		}
	}
	return "", false
}
