package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestLimitsChargeByCost runs the binary on MinIO with its default per-user
// limits. Alice reads one SKILL.md 1,000 times one after another, as a host
// loading 1,000 skills does: served from memory, none is refused (at a
// flat price per call a burst of 200 and 100 a second refused them after
// about 700). Then she floods uncached listings of her workspace (a storage
// LIST each) from 8 callers: she is refused with RetryInfo once past her
// share (the burst and the rate over the time the flood took, at 1.1 a
// listing, plus the calls in flight), while Bob's calls are all served. The
// bound is computed from the time the flood took, so a slow machine only
// loosens it. Over MCP, Carol's ls tool calls are held to the same share
// and refused with the limit error -32000 and its retryAfterMs.
func TestLimitsChargeByCost(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting.\n")
	put("bob/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting.\n")
	for i := range 3 {
		put(fmt.Sprintf("alice/threads/t1/f%d.md", i), "x\n")
		put(fmt.Sprintf("carol/threads/t1/f%d.md", i), "x\n")
	}
	p := startBinary(t, minioEnv(srv), "--storage=s3", "--s3.bucket="+bucket, "--s3.endpoint="+srv.Endpoint, "--s3.path-style", "--s3.region="+srv.Region)
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	bob := grpctest.AsCaller(ctx, "bob", "t1", "")

	for i := range 1000 {
		if _, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/skills/notes/SKILL.md"}); err != nil {
			t.Fatalf("read %d of SKILL.md: %v", i, err)
		}
	}

	def := quota.DefaultConfig()
	var listed atomic.Int64
	var refusal atomic.Pointer[error]
	start := time.Now()
	var wg sync.WaitGroup
	const callers = 8
	for range callers {
		wg.Go(func() {
			for refusal.Load() == nil && ctx.Err() == nil {
				_, err := fsc.List(alice, &skillsvcv1.ListRequest{Path: "/workspace"})
				switch status.Code(err) {
				case codes.OK:
					listed.Add(1)
				case codes.ResourceExhausted:
					refusal.CompareAndSwap(nil, &err)
					return
				default:
					t.Errorf("alice's listing: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if refusal.Load() == nil {
		t.Fatal("alice's flood of listings was never refused")
	}
	err := *refusal.Load()
	if d, ok := retryinfo.Delay(err); !ok || d <= 0 {
		t.Errorf("refusal %v carries no retry delay (RetryInfo): %v, %v", err, d, ok)
	}
	// What alice's bucket allows the flood at 1.1 a listing (at most its
	// burst, what the reads left of it, plus the rate over the flood's
	// time); the callers' calls in flight when the debt came due, more.
	share := (float64(def.Burst) + def.Rate*elapsed.Seconds()) / (quota.CallCost + quota.ListCost).Units()
	if n := float64(listed.Load()); n > share+callers {
		t.Errorf("alice listed storage %v times in %v, want at most her share %.0f + %d in flight", n, elapsed, share, callers)
	}
	t.Logf("alice: %d listings in %v before the refusal %v", listed.Load(), elapsed, err)

	// Bob, who shares the replica and the storage, is served.
	for i := range 50 {
		if _, err := fsc.List(bob, &skillsvcv1.ListRequest{Path: "/workspace"}); err != nil {
			t.Fatalf("bob's listing %d: %v", i, err)
		}
		if _, err := fsc.Read(bob, &skillsvcv1.ReadRequest{Path: "/skills/notes/SKILL.md"}); err != nil {
			t.Fatalf("bob's read %d: %v", i, err)
		}
	}

	// Over MCP the same table applies: carol's ls tool calls are admitted
	// once each at the edge and their storage listings charged by MCP's
	// loopback, so she too is refused past her share (at 0.1 a request she
	// would make ten times as many).
	session, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + p.httpAddr + "/mcp", HTTPClient: mcptest.Client(grpctest.CallerHeader("carol", "t1", "")),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	start = time.Now()
	for n := 0; ; n++ {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "ls", Arguments: map[string]any{"path": "/workspace"}})
		if err != nil {
			var werr *jsonrpc.Error
			var data struct{ RetryAfterMs int64 }
			if !errors.As(err, &werr) || werr.Code != -32000 || !strings.Contains(werr.Message, "RESOURCE_EXHAUSTED") {
				t.Fatalf("carol's ls %d over MCP: %v, want served or the limit error -32000", n, err)
			}
			if json.Unmarshal(werr.Data, &data) != nil || data.RetryAfterMs <= 0 {
				t.Errorf("the limit error's data %s says no retryAfterMs", werr.Data)
			}
			t.Logf("carol: %d ls over MCP in %v before the refusal %v", n, time.Since(start), err)
			break
		}
		if res.IsError {
			t.Fatalf("carol's ls %d over MCP: %+v", n, res.Content)
		}
		// Her share (two requests opened the session), plus one.
		if share := (float64(def.Burst)+def.Rate*time.Since(start).Seconds())/(quota.CallCost+quota.ListCost).Units() + 1; float64(n) > share {
			t.Fatalf("carol made %d listings over MCP in %v, past her share %.0f, unrefused", n, time.Since(start), share)
		}
	}
}
