package server_test

import (
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// BenchmarkListSkillsGRPC1000 is bench-load's "ListSkills warm" row in one
// process: one client's sequential ListSkills of 1,000 skills (one page, of
// bench-load's frontmatter) over a real TCP loopback connection to a gRPC
// server with the binary's interceptor chain (logging, metrics, limits
// lifted as bench-load lifts them) and options, the kept reply on a warm
// index. Each op is one whole call: the handler and the marshal, the
// transport both ways and the client's decode into 1,000 messages. The
// sub-benchmarks are the views (bench-load's row is the default, basic)
// and, on the basic view, the transport settings issue 22 weighed.
func BenchmarkListSkillsGRPC1000(b *testing.B) {
	h, _ := benchHandler(b, listLibrary1000(), skills.DefaultConfig().ReplyCacheBytes)
	const window, buffer = 1 << 20, 256 << 10
	basic, full := skillsvcv1.SkillView_SKILL_VIEW_UNSPECIFIED, skillsvcv1.SkillView_SKILL_VIEW_FULL
	for _, tc := range []struct {
		name string
		view skillsvcv1.SkillView
		srv  []grpc.ServerOption
		dial []grpc.DialOption
	}{
		{name: "basic", view: basic},
		{name: "full", view: full},
		{"basic/windows-1MiB", basic,
			[]grpc.ServerOption{grpc.InitialWindowSize(window), grpc.InitialConnWindowSize(window)},
			[]grpc.DialOption{grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window)}},
		{"basic/buffers-256KiB", basic,
			[]grpc.ServerOption{grpc.WriteBufferSize(buffer), grpc.ReadBufferSize(buffer)},
			[]grpc.DialOption{grpc.WithWriteBufferSize(buffer), grpc.WithReadBufferSize(buffer)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := listClient(b, h, tc.srv, tc.dial)
			ctx := grpctest.AsCaller(b.Context(), "alice", "t1", "")
			req := &skillsvcv1.ListSkillsRequest{PageSize: 1000, View: tc.view}
			for range 20 { // warm the kept reply and the connection
				if res, err := c.ListSkills(ctx, req); err != nil || len(res.GetSkills()) != 1000 {
					b.Fatalf("ListSkills = %d skills, %v", len(res.GetSkills()), err)
				}
			}
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				res, err := c.ListSkills(ctx, req)
				took = append(took, time.Since(start))
				if err != nil || len(res.GetSkills()) != 1000 {
					b.Fatalf("ListSkills = %d skills, %v", len(res.GetSkills()), err)
				}
			}
			// bench-load's row is in percentiles: a mean hides the calls
			// a GC cycle or a flow-control wait lands on.
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// listClient serves h on a TCP loopback port as the binary does, plus srv,
// and returns a client dialled with dial.
func listClient(b *testing.B, h skillsvcv1.SkillsServiceServer, srv []grpc.ServerOption, dial []grpc.DialOption) skillsvcv1.SkillsServiceClient {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil)) // a line a call, as at --log.level=info
	reg := prometheus.NewRegistry()
	lifted := quota.DefaultConfig() // off, as bench-load runs: one user is the load
	lifted.Rate, lifted.Concurrency = 0, 0
	limits, err := quota.New(lifted, log, reg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(limits.Close)
	metrics := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	reg.MustRegister(metrics)
	s := grpc.NewServer(append(server.Options(server.Chain{Log: log, Auth: auth.Metadata{}, Mounts: mounts.Default(), Metrics: metrics, Limits: limits}), srv...)...)
	skillsvcv1.RegisterSkillsServiceServer(s, h)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(lis)
	b.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return skillsvcv1.NewSkillsServiceClient(conn)
}

// BenchmarkGetSkillGRPC is bench-load's warm GetSkill row in one process:
// alice's GetSkill of a shared skill (the handler benchmark's library)
// from 16 concurrent callers over one TCP loopback connection, through the
// binary's interceptor chain (limits lifted as bench-load lifts them). Each
// op is one whole call, both sides of it: what a change to the server's
// per-call work (its allocations, its goroutine's stack) saves shows here
// before a bench-load run, whose client and MinIO share the cores.
func BenchmarkGetSkillGRPC(b *testing.B) {
	h, _ := benchHandler(b, getSkillLibrary(), skills.DefaultConfig().ReplyCacheBytes)
	c := listClient(b, h, nil, nil)
	ctx := grpctest.AsCaller(b.Context(), "alice", "t1", "")
	req := &skillsvcv1.GetSkillRequest{Path: "skill-0042"}
	if res, err := c.GetSkill(ctx, req); err != nil || res.GetSkill().GetName() != "skill-0042" {
		b.Fatalf("GetSkill = %v, %v", res, err)
	}
	b.ReportAllocs()
	b.SetParallelism(8) // 16 callers on this machine's 2 cores, as bench-load runs
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.GetSkill(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
