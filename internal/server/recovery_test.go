package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/server"
)

func TestPanicRecovered(t *testing.T) {
	var logs syncBuffer
	// The bucket panics in every method a handler calls directly and fails
	// the rest.
	bucket := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
	for _, op := range []string{objstore.OpStat, objstore.OpGetRange} {
		bucket.Before(op, func(context.Context, objstoretest.Call) error { panic(secret) })
	}
	bucket.Fail("", "", errDisk)
	c := start(t, bucket, options{log: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 2 { // the server survives the first panic
		_, err := c.fs.Stat(asAlice(t), &skillsvcv1.StatRequest{Path: "/workspace/x"})
		wantCode(t, "Stat", err, codes.Internal)
		if strings.Contains(status.Convert(err).Message(), "secret-key") {
			t.Errorf("panic value leaked to the client: %v", err)
		}
		_, err = download(asAlice(t), c.fs, &skillsvcv1.DownloadRequest{Path: "/workspace/x"})
		wantCode(t, "Download", err, codes.Internal)
		if strings.Contains(status.Convert(err).Message(), "secret-key") {
			t.Errorf("panic value leaked to the client: %v", err)
		}
	}
	if _, err := c.health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health after panics: %v", err)
	}
	if got := logs.String(); !strings.Contains(got, "panic in handler") || !strings.Contains(got, "secret-key") {
		t.Errorf("the panic was not logged:\n%s", got)
	}
}

func TestRecoveryInterceptors(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Service/Method"}
	unary := server.RecoveryUnaryInterceptor(log)
	for _, tc := range []struct {
		name     string
		handler  grpc.UnaryHandler
		wantResp any
		wantCode codes.Code
	}{
		{"panic", func(context.Context, any) (any, error) { panic(secret) }, nil, codes.Internal},
		{"panic with an error", func(context.Context, any) (any, error) { panic(errDisk) }, nil, codes.Internal},
		{"no panic", func(context.Context, any) (any, error) { return "resp", nil }, "resp", codes.OK},
		{"error", func(context.Context, any) (any, error) {
			return nil, status.Error(codes.NotFound, "nope")
		}, nil, codes.NotFound},
	} {
		t.Run("unary "+tc.name, func(t *testing.T) {
			resp, err := unary(t.Context(), "req", info, tc.handler)
			if resp != tc.wantResp {
				t.Errorf("resp = %v, want %v", resp, tc.wantResp)
			}
			wantCode(t, "unary", err, tc.wantCode)
			if strings.Contains(status.Convert(err).Message(), "secret-key") {
				t.Errorf("panic value leaked: %v", err)
			}
		})
	}
	stream := server.RecoveryStreamInterceptor(log)
	sinfo := &grpc.StreamServerInfo{FullMethod: "/test.Service/Stream"}
	err := stream(nil, fakeStream{ctx: t.Context()}, sinfo, func(any, grpc.ServerStream) error { panic(secret) })
	wantCode(t, "stream panic", err, codes.Internal)
	if strings.Contains(status.Convert(err).Message(), "secret-key") {
		t.Errorf("panic value leaked: %v", err)
	}
	err = stream(nil, fakeStream{ctx: t.Context()}, sinfo, func(any, grpc.ServerStream) error { return nil })
	wantCode(t, "stream without panic", err, codes.OK)
}

type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s fakeStream) Context() context.Context { return s.ctx }
