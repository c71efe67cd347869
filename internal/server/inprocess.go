package server

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"

	"github.com/skillsvc/skillsvc/internal/inproc"
	"github.com/skillsvc/skillsvc/internal/tracing"
)

// InProcess returns a channel on which the services register adds are
// called as function calls in this process, through the interceptors c
// gives the network server (Options), in their order: authentication from
// the forwarded metadata, limits, audit, the error table. The JSON gateway
// calls the services through it, so no RPC has a second implementation and
// the process runs one gRPC server. No HTTP/2 framing is involved: each
// message is encoded and decoded once per hop, as the network would, which
// is what turns a reply kept encoded (encoded.go) into real fields. With
// c.Tracer, a call is a client span under the caller's and a server span
// under that, as a call over the network is.
func InProcess(c Chain, register func(grpc.ServiceRegistrar)) grpc.ClientConnInterface {
	var o inproc.Options
	o.Unary, o.Stream = interceptors(c)
	// Marked first, so every interceptor and the handler see the surface.
	u, st := markInProcess()
	o.Unary, o.Stream = append([]grpc.UnaryServerInterceptor{u}, o.Unary...), append([]grpc.StreamServerInterceptor{st}, o.Stream...)
	if c.Tracer != nil {
		o.Client = otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(c.Tracer),
			otelgrpc.WithPropagators(tracing.Propagator), otelgrpc.WithMeterProvider(noopmetric.NewMeterProvider()))
		o.Server = serverTracing(c.Tracer)
	}
	ch := inproc.New(o)
	register(ch)
	return ch
}
