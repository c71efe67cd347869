package inproc_test

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/inproc"
)

// TestChannel: calls reach the registered service through the interceptors
// in their order, with the caller's metadata as incoming metadata and the
// handler's header delivered; a stream ends with its caller; an unknown
// method is UNIMPLEMENTED.
func TestChannel(t *testing.T) {
	var order []string
	unary := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			order = append(order, name)
			if md, _ := metadata.FromIncomingContext(ctx); len(md.Get("x-caller")) != 1 {
				return nil, status.Error(codes.Unauthenticated, "no caller")
			}
			if err := grpc.SetHeader(ctx, metadata.Pairs("x-seen", name)); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}
	}
	var streams int
	ch := inproc.New(inproc.Options{
		Unary: []grpc.UnaryServerInterceptor{unary("outer"), unary("inner")},
		Stream: []grpc.StreamServerInterceptor{func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			streams++
			return h(srv, ss)
		}},
	})
	hs := health.NewServer()
	healthpb.RegisterHealthServer(ch, hs)
	c := healthpb.NewHealthClient(ch)
	ctx := metadata.AppendToOutgoingContext(t.Context(), "x-caller", "alice")

	var hdr metadata.MD
	resp, err := c.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&hdr))
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v, %v", resp, err)
	}
	if !slices.Equal(order, []string{"outer", "inner"}) || !slices.Equal(hdr.Get("x-seen"), []string{"outer", "inner"}) {
		t.Errorf("interceptors ran %v, header %v; want outer then inner", order, hdr)
	}
	if _, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("Check without the caller's metadata: %v, want UNAUTHENTICATED", err)
	}

	wctx, cancel := context.WithCancel(ctx)
	w, err := c.Watch(wctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := w.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch = %v, %v", m, err)
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if m, err := w.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch after a change = %v, %v", m, err)
	}
	cancel()
	if _, err := w.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("Watch after its caller cancelled: %v, want CANCELED", err)
	}
	if streams != 1 {
		t.Errorf("the stream interceptor ran %d times, want once", streams)
	}

	if err := ch.Invoke(ctx, "/no.Such/Method", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("an unknown method: %v, want UNIMPLEMENTED", err)
	}
}
