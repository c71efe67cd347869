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
	"google.golang.org/grpc/metadata"
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

// New returns the JSON handler for the services, calling them over
// conn (server.InProcess in the binary).
func New(ctx context.Context, conn grpc.ClientConnInterface) (http.Handler, error) {
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
	for _, register := range []func() error{
		func() error {
			return skillsvcv1.RegisterFilesystemServiceHandlerClient(ctx, mux, skillsvcv1.NewFilesystemServiceClient(conn))
		},
		func() error {
			return skillsvcv1.RegisterSkillsServiceHandlerClient(ctx, mux, skillsvcv1.NewSkillsServiceClient(conn))
		},
		func() error {
			return skillsvcv1.RegisterAdminServiceHandlerClient(ctx, mux, skillsvcv1.NewAdminServiceClient(conn))
		},
		func() error {
			return skillsvcv1.RegisterLibraryServiceHandlerClient(ctx, mux, skillsvcv1.NewLibraryServiceClient(conn))
		},
		func() error {
			return skillsvcv1.RegisterUsageServiceHandlerClient(ctx, mux, skillsvcv1.NewUsageServiceClient(conn))
		},
	} {
		if err := register(); err != nil {
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

// Metadata is the gRPC metadata a call made for r carries, for another
// HTTP front end over the same channel (internal/wellknown): the headers
// New forwards, and Authorization, so the call is authenticated as the
// JSON API's would be.
func Metadata(r *http.Request) metadata.MD {
	md := metadata.MD{}
	for k, vs := range r.Header {
		if forwarded[k] || k == "Authorization" {
			md[strings.ToLower(k)] = vs
		}
	}
	return md
}

// errorMux writes WriteError's answers as New's mux writes its own.
var errorMux = runtime.NewServeMux(runtime.WithOutgoingHeaderMatcher(outgoingHeader))

// WriteError answers r with err as the JSON API answers a failed call:
// the same body ({"code", "message", "details"}), status and headers.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	writeError(r.Context(), errorMux, &runtime.JSONPb{}, w, r, err)
}
