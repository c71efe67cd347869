package inproc

import (
	"context"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/skillsvc/skillsvc/internal/limits"
)

// Channel is a registrar for services and a client connection to them. A call runs on the caller's goroutine (a stream's
// handler on one of its own), in a context that has the caller's deadline
// and cancellation and, as over the network, none of its values but the
// outgoing metadata, which arrives as incoming.
type Channel struct {
	methods        map[string]handler // by full method, "/pkg.Service/Method"
	unary          grpc.UnaryServerInterceptor
	stream         grpc.StreamServerInterceptor
	client, server stats.Handler // nil: none
}

// Options are what a Channel runs around its handlers; all optional.
type Options struct {
	// Unary and Stream are the server's interceptors, the first outermost,
	// as grpc.ChainUnaryInterceptor and grpc.ChainStreamInterceptor take
	// them.
	Unary  []grpc.UnaryServerInterceptor
	Stream []grpc.StreamServerInterceptor
	// Client and Server see each call as a gRPC client's and server's
	// stats handlers do (tracing: otelgrpc's), without the connection
	// events and payloads.
	Client, Server stats.Handler
}

// New returns a Channel with no services; register them with
// RegisterService (it is a grpc.ServiceRegistrar).
func New(o Options) *Channel {
	ch := &Channel{methods: map[string]handler{}, client: o.Client, server: o.Server,
		unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req)
		},
		stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, ss)
		},
	}
	if len(o.Unary) > 0 {
		ch.unary = chainUnary(o.Unary)
	}
	if len(o.Stream) > 0 {
		ch.stream = chainStream(o.Stream)
	}
	return ch
}

type handler struct {
	impl   any
	unary  *grpc.MethodDesc
	stream *grpc.StreamDesc
}

// RegisterService implements grpc.ServiceRegistrar.
func (ch *Channel) RegisterService(sd *grpc.ServiceDesc, impl any) {
	for i := range sd.Methods {
		ch.methods["/"+sd.ServiceName+"/"+sd.Methods[i].MethodName] = handler{impl: impl, unary: &sd.Methods[i]}
	}
	for i := range sd.Streams {
		ch.methods["/"+sd.ServiceName+"/"+sd.Streams[i].StreamName] = handler{impl: impl, stream: &sd.Streams[i]}
	}
}

// begin starts a call's client and server sides: the client's stats
// (tracing) on ctx, and the server's context with its transport stream.
func (ch *Channel) begin(ctx context.Context, method string, ts grpc.ServerTransportStream, clientStream, serverStream bool) (clientCtx, serverCtx context.Context) {
	if ch.client != nil {
		ctx = ch.client.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method})
		ch.client.HandleRPC(ctx, &stats.Begin{Client: true, BeginTime: time.Now(), IsClientStream: clientStream, IsServerStream: serverStream})
	}
	sctx := context.Context(withoutValues{ctx})
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		sctx = metadata.NewIncomingContext(sctx, md)
	}
	sctx = grpc.NewContextWithServerTransportStream(sctx, ts)
	if ch.server != nil {
		sctx = ch.server.TagRPC(sctx, &stats.RPCTagInfo{FullMethodName: method})
		ch.server.HandleRPC(sctx, &stats.Begin{BeginTime: time.Now(), IsClientStream: clientStream, IsServerStream: serverStream})
	}
	return ctx, sctx
}

// end ends both sides' stats with the call's status.
func (ch *Channel) end(clientCtx, serverCtx context.Context, err error) {
	if ch.server != nil {
		ch.server.HandleRPC(serverCtx, &stats.End{EndTime: time.Now(), Error: err})
	}
	if ch.client != nil {
		ch.client.HandleRPC(clientCtx, &stats.End{Client: true, EndTime: time.Now(), Error: err})
	}
}

// Invoke implements grpc.ClientConnInterface for calls of one request and
// one reply.
func (ch *Channel) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	h, ok := ch.methods[method]
	if !ok || h.unary == nil {
		return status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	ts := &transportStream{method: method}
	ctx, sctx := ch.begin(ctx, method, ts, false, false)
	sctx, cancel := context.WithCancel(sctx) // as a server's: done when the call is
	resp, err := h.unary.Handler(h.impl, sctx, func(m any) error { return copyMessage(m, req) }, ch.unary)
	cancel()
	if err = wireStatus(err); err == nil {
		err = copyMessage(reply, resp)
	}
	ts.deliver(opts)
	ch.end(ctx, sctx, err)
	return err
}

// NewStream implements grpc.ClientConnInterface for streams; the handler
// runs on a goroutine of its own until it returns, which the caller's
// cancellation brings about.
func (ch *Channel) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	h, ok := ch.methods[method]
	if !ok || h.stream == nil {
		return nil, status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	p := &pipe{toServer: make(chan []byte), toClient: make(chan []byte), headerSent: make(chan struct{}), done: make(chan struct{})}
	ss := &serverStream{pipe: p, ts: transportStream{method: method}}
	ss.ts.stream = ss
	ctx, sctx := ch.begin(ctx, method, &ss.ts, h.stream.ClientStreams, h.stream.ServerStreams)
	sctx, cancel := context.WithCancel(sctx)
	ss.ctx = sctx
	go func() {
		err := wireStatus(ch.stream(h.impl, ss, &grpc.StreamServerInfo{FullMethod: method, IsClientStream: h.stream.ClientStreams, IsServerStream: h.stream.ServerStreams}, h.stream.Handler))
		ss.finish(err)
		cancel()
		ch.end(ctx, sctx, err)
	}()
	return &clientStream{pipe: p, ctx: ctx, clientStreams: desc.ClientStreams, serverStreams: desc.ServerStreams, opts: opts}, nil
}

// pipe joins the two ends of a stream. The message channels are unbuffered,
// so a message sent has been received before its sender goes on: when done
// is closed, no message is in flight.
type pipe struct {
	toServer, toClient chan []byte
	headerSent         chan struct{} // closed with header set
	done               chan struct{} // closed with err and trailer set
	header, trailer    metadata.MD
	err                error
}

type serverStream struct {
	*pipe
	ctx context.Context
	ts  transportStream
	mu  sync.Mutex // guards the headers' sending and ts
	hdr bool       // headerSent is closed
}

func (s *serverStream) Context() context.Context { return s.ctx }

func (s *serverStream) SetHeader(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hdr {
		return status.Error(codes.Internal, "in-process call: headers already sent")
	}
	s.ts.header = metadata.Join(s.ts.header, md)
	return nil
}

func (s *serverStream) SendHeader(md metadata.MD) error {
	if err := s.SetHeader(md); err != nil {
		return err
	}
	s.sendHeader()
	return nil
}

func (s *serverStream) sendHeader() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hdr {
		s.hdr, s.header = true, s.ts.header
		close(s.headerSent)
	}
}

func (s *serverStream) SetTrailer(md metadata.MD) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ts.trailer = metadata.Join(s.ts.trailer, md)
}

func (s *serverStream) SendMsg(m any) error {
	s.sendHeader()
	b, err := encode(m)
	if err != nil {
		return err
	}
	select {
	case s.toClient <- b:
		return nil
	case <-s.ctx.Done():
		return status.FromContextError(s.ctx.Err()).Err()
	}
}

func (s *serverStream) RecvMsg(m any) error {
	select {
	case b, ok := <-s.toServer:
		if !ok {
			return io.EOF
		}
		return decode(m, b)
	case <-s.ctx.Done():
		return status.FromContextError(s.ctx.Err()).Err()
	}
}

// finish ends the stream with the handler's status.
func (s *serverStream) finish(err error) {
	s.sendHeader()
	s.mu.Lock()
	s.pipe.trailer, s.pipe.err = s.ts.trailer, err
	s.mu.Unlock()
	close(s.done)
}

type clientStream struct {
	*pipe
	ctx           context.Context
	clientStreams bool
	serverStreams bool
	opts          []grpc.CallOption
	sendMu        sync.Mutex
	sendClosed    bool
}

func (c *clientStream) Context() context.Context { return c.ctx }

func (c *clientStream) Header() (metadata.MD, error) {
	select {
	case <-c.headerSent:
		return c.header, nil
	case <-c.ctx.Done():
		return nil, status.FromContextError(c.ctx.Err()).Err()
	}
}

// Trailer is valid once RecvMsg has returned an error or io.EOF.
func (c *clientStream) Trailer() metadata.MD {
	select {
	case <-c.done:
		return c.trailer
	default:
		return nil
	}
}

func (c *clientStream) CloseSend() error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if !c.sendClosed {
		c.sendClosed = true
		close(c.toServer)
	}
	return nil
}

// SendMsg returns io.EOF once the handler has returned or the caller has
// gone, as a gRPC client stream does (nil for a call of one request, as the
// generated code expects); RecvMsg then gives the status.
func (c *clientStream) SendMsg(m any) error {
	b, err := encode(m)
	if err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.sendClosed {
		return status.Error(codes.Internal, "in-process call: SendMsg after CloseSend")
	}
	select {
	case c.toServer <- b:
		return nil
	case <-c.done:
	case <-c.ctx.Done():
	}
	if !c.clientStreams {
		return nil
	}
	return io.EOF
}

func (c *clientStream) RecvMsg(m any) error {
	select {
	case b := <-c.toClient:
		if err := decode(m, b); err != nil {
			return err
		}
		if c.serverStreams {
			return nil
		}
		// One reply: the call ends with it, as grpc's RecvMsg waits for
		// the status after a unary reply.
		select {
		case <-c.done:
		case <-c.ctx.Done():
			return status.FromContextError(c.ctx.Err()).Err()
		}
		return c.finished()
	case <-c.done:
		if err := c.finished(); err != nil || c.serverStreams {
			if err == nil {
				err = io.EOF
			}
			return err
		}
		return status.Error(codes.Internal, "in-process call: the handler sent no reply")
	case <-c.ctx.Done():
		return status.FromContextError(c.ctx.Err()).Err()
	}
}

// finished is the ended call's status, its header and trailer delivered to
// the call's options.
func (c *clientStream) finished() error {
	ts := transportStream{header: c.header, trailer: c.trailer}
	ts.deliver(c.opts)
	return c.err
}

// transportStream collects what a handler sets with grpc.SetHeader and
// grpc.SetTrailer, for the caller's grpc.Header and grpc.Trailer options.
type transportStream struct {
	method          string
	header, trailer metadata.MD
	stream          *serverStream // a stream's, which sends its header with the first message
}

func (t *transportStream) Method() string { return t.method }

func (t *transportStream) SetHeader(md metadata.MD) error {
	if t.stream != nil {
		return t.stream.SetHeader(md)
	}
	t.header = metadata.Join(t.header, md)
	return nil
}

func (t *transportStream) SendHeader(md metadata.MD) error {
	if t.stream != nil {
		return t.stream.SendHeader(md)
	}
	return t.SetHeader(md)
}

func (t *transportStream) SetTrailer(md metadata.MD) error {
	if t.stream != nil {
		t.stream.SetTrailer(md)
		return nil
	}
	t.trailer = metadata.Join(t.trailer, md)
	return nil
}

// deliver hands the header and trailer to the call options asking for them.
func (t *transportStream) deliver(opts []grpc.CallOption) {
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = t.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = t.trailer
		}
	}
}

// withoutValues has a context's deadline and cancellation and none of its
// values: the handler sees what it would over the network.
type withoutValues struct{ context.Context }

func (withoutValues) Value(any) any { return nil }

// copyMessage copies in into out as the network does: encoded and decoded,
// so neither side shares the other's message and a reply's encoded
// unknown fields arrive decoded.
func copyMessage(out, in any) error {
	b, err := encode(in)
	if err != nil {
		return err
	}
	return decode(out, b)
}

func encode(in any) ([]byte, error) {
	m, ok := in.(proto.Message)
	if !ok {
		return nil, status.Errorf(codes.Internal, "in-process call: %T is not a proto message", in)
	}
	return proto.Marshal(m)
}

// decode is the receiving end, with the network server's cap
// (limits.MaxMessageBytes) on what it takes.
func decode(out any, b []byte) error {
	if len(b) > limits.MaxMessageBytes {
		return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", len(b), limits.MaxMessageBytes)
	}
	m, ok := out.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "in-process call: %T is not a proto message", out)
	}
	return proto.Unmarshal(b, m)
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
