package server

import (
	"context"

	"github.com/fullstorydev/grpchan/inprocgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/tracing"
)

// InProcess returns a channel on which the services register adds are
// called as function calls in this process, through the interceptors c
// gives the network server (Options), in their order: authentication from
// the forwarded metadata, limits, audit, the error table. The JSON gateway
// calls the services through it, so no RPC has a second implementation and
// the process runs one gRPC server. No HTTP/2 framing is involved: each
// message is encoded and decoded once per hop (wire), as the network would,
// which is what turns a reply kept encoded (encoded.go) into real fields.
// With c.Tracer, a call is a client span under the caller's and a server
// span under that, as a call over the network is.
func InProcess(c Chain, register func(grpc.ServiceRegistrar)) grpc.ClientConnInterface {
	unary, stream := interceptors(c)
	ch := new(inprocgrpc.Channel).
		WithServerUnaryInterceptor(chainUnary(append([]grpc.UnaryServerInterceptor{wireStatusUnary}, unary...))).
		WithServerStreamInterceptor(chainStream(append([]grpc.StreamServerInterceptor{wireStatusStream}, stream...))).
		WithCloner(wire{})
	if c.Tracer != nil {
		ch = ch.WithClientStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(c.Tracer),
			otelgrpc.WithPropagators(tracing.Propagator), otelgrpc.WithMeterProvider(noopmetric.NewMeterProvider()))).
			WithServerStatsHandler(serverTracing(c.Tracer))
	}
	register(ch)
	return ch
}

// wire copies a message between the caller and the handler as the network
// does: encoded (Clone) and decoded (Copy), so neither side shares the
// other's message and a reply's encoded unknown fields arrive decoded. The
// receiver's cap is the network server's (limits.MaxMessageBytes).
type wire struct{}

// wireBytes is a message in its encoded form, between Clone and Copy.
type wireBytes []byte

func (wire) Clone(in any) (any, error) {
	b, err := encode(in)
	return wireBytes(b), err
}

func (wire) Copy(out, in any) error {
	b, ok := in.(wireBytes)
	if !ok {
		var err error
		if b, err = encode(in); err != nil {
			return err
		}
	}
	if len(b) > limits.MaxMessageBytes {
		return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", len(b), limits.MaxMessageBytes)
	}
	m, ok := out.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "in-process call: %T is not a proto message", out)
	}
	return proto.Unmarshal(b, m)
}

func encode(in any) ([]byte, error) {
	m, ok := in.(proto.Message)
	if !ok {
		return nil, status.Errorf(codes.Internal, "in-process call: %T is not a proto message", in)
	}
	return proto.Marshal(m)
}

// wireStatus is what a gRPC server's transport makes of a handler's error:
// a status as it is, a context error its code, anything else Unknown.
func wireStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	return st.Err()
}

func wireStatusUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	return resp, wireStatus(err)
}

func wireStatusStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return wireStatus(handler(srv, ss))
}

// chainUnary runs ints in order, the first outermost, as
// grpc.ChainUnaryInterceptor does.
func chainUnary(ints []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return ints[0](ctx, req, info, nextUnary(ints[1:], info, handler))
	}
}

func nextUnary(ints []grpc.UnaryServerInterceptor, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) grpc.UnaryHandler {
	if len(ints) == 0 {
		return handler
	}
	return func(ctx context.Context, req any) (any, error) {
		return ints[0](ctx, req, info, nextUnary(ints[1:], info, handler))
	}
}

// chainStream is chainUnary for streams.
func chainStream(ints []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return ints[0](srv, ss, info, nextStream(ints[1:], info, handler))
	}
}

func nextStream(ints []grpc.StreamServerInterceptor, info *grpc.StreamServerInfo, handler grpc.StreamHandler) grpc.StreamHandler {
	if len(ints) == 0 {
		return handler
	}
	return func(srv any, ss grpc.ServerStream) error {
		return ints[0](srv, ss, info, nextStream(ints[1:], info, handler))
	}
}
