package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/tracing"
	"github.com/skillsvc/skillsvc/internal/tracing/tracingtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// recorder is tracingtest's, with a trace's spans.
type recorder struct{ *tracingtest.Recorder }

func newRecorder() *recorder { return &recorder{tracingtest.NewRecorder()} }

func (r *recorder) waitFor(t *testing.T, what string, match func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
	t.Helper()
	return r.WaitFor(t, what, match)
}

// trace is the ended spans of one trace.
type traceSpans []sdktrace.ReadOnlySpan

func (r *recorder) trace(id trace.TraceID) traceSpans {
	var out traceSpans
	for _, s := range r.Ended() {
		if s.SpanContext().TraceID() == id {
			out = append(out, s)
		}
	}
	return out
}

// under returns the spans named name below span (at any depth).
func (ts traceSpans) under(span sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ts {
		byID[s.SpanContext().SpanID()] = s
	}
	var out []sdktrace.ReadOnlySpan
	for _, s := range ts {
		if s.Name() != name {
			continue
		}
		for p := byID[s.Parent().SpanID()]; p != nil; p = byID[p.Parent().SpanID()] {
			if p.SpanContext().SpanID() == span.SpanContext().SpanID() {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

// caller is a W3C trace context as a traced client sends it.
type caller struct {
	traceID trace.TraceID
	spanID  trace.SpanID
}

func newCaller() caller {
	var c caller
	rand.Read(c.traceID[:])
	rand.Read(c.spanID[:])
	return c
}

func (c caller) traceparent() string { return fmt.Sprintf("00-%s-%s-01", c.traceID, c.spanID) }

// tracedServer is a skillsvc on MinIO and Redis traced into rec, with
// alice's library and the shared one in its bucket.
type tracedServer struct {
	addrs map[string]string
	rec   *recorder
	logs  *logtest.Buffer
}

func startTraced(t *testing.T) *tracedServer {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	s3c := srv.Client(t)
	for key, body := range map[string]string{
		"alice/skills/notes/SKILL.md":      "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\n",
		"_shared/skills/data/csv/SKILL.md": "---\nname: csv\ndescription: Clean CSV files.\n---\n",
	} {
		if _, err := s3c.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range srv.SkillsvcEnv() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, v)
		}
	}
	args := append(srv.S3Flags(bucket), "--listen=127.0.0.1:0", "--http.listen=127.0.0.1:0", "--log.level=debug", "--log.format=json",
		"--cache.redis.addrs="+red.Addr, "--cache.redis.key-prefix=trace-"+rand.Text()+":")
	cfg, err := app.Load(args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s := &tracedServer{rec: newRecorder(), logs: &logtest.Buffer{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.rec))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.NewLogger(cfg, s.logs), app.WithTracerProvider(tp))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-ran
	})
	s.addrs = waitListeners(t, s.logs, "serving http", "serving")
	return s
}

// TestTraceOfAnRPC: one gRPC call that lists a library from storage and
// the shared cache is one trace, continuing the caller's: the RPC's server
// span, under it the index load and revalidation and, under those, a span
// for each storage call and each Redis call; the call's log line names
// the trace and the RPC's span.
func TestTraceOfAnRPC(t *testing.T) {
	s := startTraced(t)
	conn, err := grpc.NewClient(s.addrs["serving"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := newCaller()
	ctx := metadata.AppendToOutgoingContext(grpctest.AsCaller(t.Context(), "alice", "t1", ""), "traceparent", c.traceparent())
	resp, err := skillsvcv1.NewSkillsServiceClient(conn).ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
	if err != nil || len(resp.GetSkills()) != 2 {
		t.Fatalf("ListSkills = %v, %v; want 2 skills", resp, err)
	}

	const method = "skillsvc.v1.SkillsService/ListSkills"
	rpc := s.rec.waitFor(t, method, func(sp sdktrace.ReadOnlySpan) bool {
		return sp.Name() == method && sp.SpanContext().TraceID() == c.traceID
	})
	if rpc.SpanKind() != trace.SpanKindServer || rpc.Parent().SpanID() != c.spanID || !rpc.Parent().IsRemote() {
		t.Errorf("RPC span: kind %v, parent %s (remote %v); want a server span under the caller's %s", rpc.SpanKind(), rpc.Parent().SpanID(), rpc.Parent().IsRemote(), c.spanID)
	}
	if got := attr(rpc, "skillsvc.user").AsString(); got != "alice" {
		t.Errorf("RPC span's skillsvc.user = %q, want alice", got)
	}
	spans := s.rec.trace(c.traceID)
	libraries := map[string]sdktrace.ReadOnlySpan{}
	for _, load := range spans.under(rpc, "libindex.revalidate") {
		libraries[attr(load, "skillsvc.library").AsString()] = load
	}
	alice := libraries["alice"]
	if len(spans.under(rpc, "libindex.load")) < 2 || alice == nil || len(libraries) != 2 {
		t.Fatalf("want a load and a revalidation of alice's library and the shared one under the RPC; spans: %s", s.rec.Describe())
	}
	for key, want := range map[attribute.Key]int64{"skillsvc.library.objects": 1, "skillsvc.library.heads_read": 1} {
		if got := attr(alice, key).AsInt64(); got != want {
			t.Errorf("alice's revalidation: %s = %d, want %d", key, got, want)
		}
	}
	lists := spans.under(alice, "objstore.list")
	if len(lists) != 1 || attr(lists[0], "objstore.prefix").AsString() != "alice/skills/" || lists[0].SpanKind() != trace.SpanKindClient {
		t.Errorf("alice's revalidation lists %d times, want once, under alice/skills/; spans: %s", len(lists), s.rec.Describe())
	}
	if len(spans.under(alice, "objstore.get_range")) != 1 {
		t.Errorf("want one SKILL.md head read from storage under alice's revalidation; spans: %s", s.rec.Describe())
	}
	redis := 0
	for _, name := range []string{"cache.fetch", "cache.store", "cache.lock"} {
		for _, cs := range spans.under(rpc, name) {
			if attr(cs, "cache.level").AsString() == "redis" {
				redis++
			}
		}
	}
	if redis == 0 {
		t.Errorf("no Redis call traced under the RPC; spans: %s", s.rec.Describe())
	}

	// The call's log line (the logging interceptor's) names the trace.
	var found bool
	for line := range strings.Lines(s.logs.String()) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "rpc" || m["method"] != "/"+method {
			continue
		}
		found = true
		if m[tracing.TraceIDKey] != c.traceID.String() || m[tracing.SpanIDKey] != rpc.SpanContext().SpanID().String() {
			t.Errorf("the RPC's log line has trace_id %v span_id %v, want %s %s", m[tracing.TraceIDKey], m[tracing.SpanIDKey], c.traceID, rpc.SpanContext().SpanID())
		}
	}
	if !found {
		t.Errorf("no rpc log line for %s:\n%s", method, s.logs)
	}
}

// headerClient is an HTTP client that sends the identity headers and the
// traceparent current when each request is made.
func headerClient(traceparent *atomic.Value) *http.Client {
	h := grpctest.CallerHeader("alice", "t1", "")
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header[k] = v
		}
		if tp, _ := traceparent.Load().(string); tp != "" {
			r.Header.Set("traceparent", tp)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTraceOfHTTPRequests: a JSON call and an MCP request are each one
// trace continuing the caller's: the HTTP request's server span, under it
// the in-process channel's client span and, under that, the RPC's server
// span (for MCP, the RPC-named span directly under the MCP method's). An MCP request after initialize
// is traced under its own HTTP request, not the one that opened the
// session.
func TestTraceOfHTTPRequests(t *testing.T) {
	s := startTraced(t)
	var current atomic.Value
	client := headerClient(&current)
	const method = "skillsvc.v1.SkillsService/ListSkills"

	// checkRPC finds method's server span under parent, through the
	// in-process channel's client span.
	checkRPC := func(t *testing.T, c caller, parent sdktrace.ReadOnlySpan, method string) {
		t.Helper()
		s.rec.waitFor(t, method, func(sp sdktrace.ReadOnlySpan) bool {
			return sp.Name() == method && sp.SpanKind() == trace.SpanKindServer && sp.SpanContext().TraceID() == c.traceID
		})
		spans := s.rec.trace(c.traceID)
		var rpcs []sdktrace.ReadOnlySpan
		for _, client := range spans.under(parent, method) {
			if client.SpanKind() == trace.SpanKindClient && client.Parent().SpanID() == parent.SpanContext().SpanID() {
				for _, rpc := range spans.under(client, method) {
					if rpc.SpanKind() == trace.SpanKindServer && rpc.Parent().SpanID() == client.SpanContext().SpanID() {
						rpcs = append(rpcs, rpc)
					}
				}
			}
		}
		if len(rpcs) != 1 {
			t.Errorf("%d RPC server spans under a client span under %q, want 1; spans: %s", len(rpcs), parent.Name(), s.rec.Describe())
		}
	}

	t.Run("JSON", func(t *testing.T) {
		c := newCaller()
		current.Store(c.traceparent())
		resp, err := client.Post("http://"+s.addrs["serving http"]+"/"+method, "application/json", bytes.NewReader([]byte("{}")))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", method, resp.Status)
		}
		httpSpan := s.rec.waitFor(t, "HTTP", func(sp sdktrace.ReadOnlySpan) bool {
			return sp.SpanKind() == trace.SpanKindServer && sp.SpanContext().TraceID() == c.traceID && sp.Parent().SpanID() == c.spanID
		})
		if !strings.HasPrefix(httpSpan.Name(), "POST /skillsvc.v1.SkillsService/") {
			t.Errorf("HTTP span named %q, want it named for its route", httpSpan.Name())
		}
		checkRPC(t, c, httpSpan, method)
	})

	// A 2025-11-25 session's handlers run in the context of the request
	// that opened it; a 2026-07-28 request has no session.
	for name, version := range map[string]string{"MCP/session": "2025-11-25", "MCP/sessionless": ""} {
		t.Run(name, func(t *testing.T) {
			opened := newCaller()
			current.Store(opened.traceparent())
			session, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: "http://" + s.addrs["serving http"] + "/mcp", HTTPClient: client, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			if got := session.InitializeResult().ProtocolVersion; version != "" && got != version {
				t.Fatalf("session speaks %s, want %s", got, version)
			}

			c := newCaller()
			current.Store(c.traceparent())
			res, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"skill": "notes"}})
			if err != nil || res.IsError {
				t.Fatalf("load_skill = %+v, %v", res, err)
			}
			call := s.rec.waitFor(t, "tools/call", func(sp sdktrace.ReadOnlySpan) bool {
				return sp.Name() == "tools/call" && sp.SpanContext().TraceID() == c.traceID
			})
			if got := attr(call, "gen_ai.tool.name").AsString(); got != "load_skill" {
				t.Errorf("tools/call span: gen_ai.tool.name = %q", got)
			}
			httpSpan := s.rec.waitFor(t, "HTTP", func(sp sdktrace.ReadOnlySpan) bool {
				return sp.SpanContext().SpanID() == call.Parent().SpanID()
			})
			if httpSpan.Name() != "POST /mcp" || httpSpan.Parent().SpanID() != c.spanID {
				t.Errorf("the MCP span's parent is %q under %s, want POST /mcp under the caller's %s", httpSpan.Name(), httpSpan.Parent().SpanID(), c.spanID)
			}
			// MCP calls the catalog directly, in a span of the call under
			// the message's.
			s.rec.waitFor(t, "RenderSkill", func(sp sdktrace.ReadOnlySpan) bool {
				return sp.Name() == "skillsvc.v1.SkillsService/RenderSkill" && sp.SpanContext().TraceID() == c.traceID && sp.Parent().SpanID() == call.SpanContext().SpanID()
			})
			for _, sp := range s.rec.trace(opened.traceID) {
				if sp.Name() == "tools/call" || strings.HasPrefix(sp.Name(), "skillsvc.v1.") {
					t.Errorf("%s joined the trace of the request that opened the session", sp.Name())
				}
			}
		})
	}
}
