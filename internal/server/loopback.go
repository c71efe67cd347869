package server

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/skillsvc/skillsvc/internal/limits"
)

// loopbackBuffer is the in-memory connection's buffer; calls are limited by
// the server's message size caps, not by it.
const loopbackBuffer = 1 << 20

// Loopback serves the services register adds on a gRPC server with opts,
// listening in memory, and returns a client connection to it. The HTTP endpoints (JSON over HTTP, MCP) call the
// services through it, so each of their calls runs the same interceptor
// chain as a gRPC call — authentication from the forwarded headers, limits,
// audit, the error table — and no RPC has a second implementation. opts
// should be the network server's less its transport credentials: the bytes
// never leave the process. dial adds client options (the tracing of the
// calls, so they join the HTTP request's trace). stop closes the
// connection and stops the server.
func Loopback(opts []grpc.ServerOption, register func(grpc.ServiceRegistrar), dial ...grpc.DialOption) (conn *grpc.ClientConn, stop func(), err error) {
	s := grpc.NewServer(opts...)
	register(s)
	lis := bufconn.Listen(loopbackBuffer)
	go s.Serve(lis)
	conn, err = grpc.NewClient("passthrough:///loopback", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(limits.MaxMessageBytes), grpc.MaxCallSendMsgSize(limits.MaxMessageBytes)),
	}, dial...)...)
	if err != nil {
		s.Stop()
		return nil, nil, err
	}
	return conn, func() {
		conn.Close()
		s.GracefulStop()
	}, nil
}
