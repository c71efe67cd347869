// Package gateway serves every RPC of the three services as JSON over HTTP,
// for curl and for languages without gRPC:
//
//	POST /skillsvc.v1.SkillsService/ListSkills
//	{"pageSize": 20}
//
// The request body is the request message in the protobuf JSON mapping
// (field names in lowerCamelCase or as in the proto); the answer is the
// response message, or a google.rpc.Status ({"code", "message",
// "details"}) with the HTTP status grpc-gateway maps its code to. The
// handlers are generated from the protos by protoc-gen-grpc-gateway and call
// the services over a gRPC connection: given server.Loopback's, every JSON
// call runs the same interceptors as a gRPC call, so authentication, limits,
// audit and the error table hold, and no RPC is implemented twice.
package gateway

import (
	"context"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errorinfo"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/requestid"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
)

// forwarded are the request headers passed on as gRPC metadata under their
// own names: the caller's identity, its pin and request ID. Authorization is always
// forwarded by grpc-gateway. No other header can set metadata, so a caller
// cannot reach any key an interceptor trusts.
var forwarded = map[string]bool{
	textproto.CanonicalMIMEHeaderKey(auth.UserKey):    true,
	textproto.CanonicalMIMEHeaderKey(auth.ThreadKey):  true,
	textproto.CanonicalMIMEHeaderKey(auth.TicketKey):  true,
	textproto.CanonicalMIMEHeaderKey(auth.TeamsKey):   true,
	textproto.CanonicalMIMEHeaderKey(auth.PinKey):     true,
	textproto.CanonicalMIMEHeaderKey(auth.ScopeKey):   true,
	textproto.CanonicalMIMEHeaderKey(auth.HarnessKey): true,
	textproto.CanonicalMIMEHeaderKey(auth.AdminKey):   true,
	textproto.CanonicalMIMEHeaderKey(requestid.Key):   true,
}

// New returns the JSON handler for the three services, calling them over
// conn.
func New(ctx context.Context, conn *grpc.ClientConn) (http.Handler, error) {
	mux := runtime.NewServeMux(
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithErrorHandler(writeError),
		// Unknown fields are refused (INVALID_ARGUMENT, 400) so a
		// misspelt field is an error, not silently the default.
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: &runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}}),
		// Only POST is routed; X-HTTP-Method-Override could turn a GET
		// into one.
		runtime.WithDisableHTTPMethodOverride(),
	)
	for _, register := range []func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error{
		skillsvcv1.RegisterFilesystemServiceHandler,
		skillsvcv1.RegisterSkillsServiceHandler,
		skillsvcv1.RegisterAdminServiceHandler,
		skillsvcv1.RegisterLibraryServiceHandler,
	} {
		if err := register(ctx, mux, conn); err != nil {
			return nil, err
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limits.MaxJSONBodyBytes)
		mux.ServeHTTP(w, r)
	}), nil
}

func incomingHeader(key string) (string, bool) {
	if forwarded[textproto.CanonicalMIMEHeaderKey(key)] {
		return strings.ToLower(key), true
	}
	return runtime.DefaultHeaderMatcher(key)
}

// outgoingHeader echoes the request ID as X-Request-Id; no other response
// metadata becomes a header.
func outgoingHeader(key string) (string, bool) {
	if key == requestid.Key {
		return "X-Request-Id", true
	}
	return "", false
}

// writeError is grpc-gateway's error answer plus Retry-After, in seconds,
// when the status carries RetryInfo (a per-user limit), so HTTP clients can
// back off without parsing details; and 507 Insufficient Storage, not
// grpc-gateway's 429 for every RESOURCE_EXHAUSTED, when storage is full
// (errorinfo.StorageFull): waiting does not fix that, so a client must not
// read it as a rate limit. (A body over limits.MaxJSONBodyBytes fails to
// decode: INVALID_ARGUMENT, "http: request body too large".)
func writeError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if d, ok := retryinfo.Delay(err); ok {
		secs := (d + time.Second - 1) / time.Second
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
	}
	if reason, _ := errorinfo.Reason(err); reason == errorinfo.StorageFull {
		err = &runtime.HTTPStatusError{HTTPStatus: http.StatusInsufficientStorage, Err: err}
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}
