package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// otlpReceiver is the smallest OTLP/HTTP trace receiver: it keeps the
// spans of every export, with the service name of their resource.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service, name   string
	traceID, parent string // hex
	spanID          string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	var export collectorpb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &export)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range export.GetResourceSpans() {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{service: service, name: s.GetName(), traceID: hex.EncodeToString(s.GetTraceId()),
					spanID: hex.EncodeToString(s.GetSpanId()), parent: hex.EncodeToString(s.GetParentSpanId())})
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *otlpReceiver) received() []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedSpan(nil), r.spans...)
}

// TestTracesExportedEndToEnd: with OTEL_EXPORTER_OTLP_ENDPOINT set, the
// binary exports its spans over OTLP/HTTP; a ListSkills sent with a W3C
// traceparent is one trace under the caller's span, with the storage and
// Redis calls it made, all flushed by a graceful shutdown.
func TestTracesExportedEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\n")
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()

	p := startBinary(t, minioEnv(srv, "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_SERVICE_NAME=skillsvc-e2e"),
		append(s3Flags(srv, bucket), redisFlags(red, "trace-"+rand.Text()+":")...)...)
	if !strings.Contains(p.output(), "tracing: exporting spans") {
		t.Errorf("the binary did not log that it exports spans:\n%s", p.output())
	}

	var traceID [16]byte
	var callerSpan [8]byte
	rand.Read(traceID[:])
	rand.Read(callerSpan[:])
	tid, sid := hex.EncodeToString(traceID[:]), hex.EncodeToString(callerSpan[:])
	ctx := metadata.AppendToOutgoingContext(grpctest.AsCaller(t.Context(), "alice", "t1", ""), "traceparent", fmt.Sprintf("00-%s-%s-01", tid, sid))
	if _, err := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr)).ListSkills(ctx, &skillsvcv1.ListSkillsRequest{}); err != nil {
		t.Fatal(err)
	}

	// A graceful stop flushes the spans not yet exported.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.output())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of SIGTERM")
	}

	var rpc *receivedSpan
	names := map[string]int{}
	spans := recv.received()
	for i, s := range spans {
		if s.traceID != tid {
			continue
		}
		names[s.name]++
		if s.name == "skillsvc.v1.SkillsService/ListSkills" {
			rpc = &spans[i]
		}
		if s.service != "skillsvc-e2e" {
			t.Errorf("span %q exported for service %q, want OTEL_SERVICE_NAME's skillsvc-e2e", s.name, s.service)
		}
	}
	if rpc == nil || rpc.parent != sid {
		t.Fatalf("no ListSkills span under the caller's span %s in the trace; exported there: %v", sid, names)
	}
	for _, name := range []string{"libindex.load", "libindex.revalidate", "objstore.list", "objstore.get_range", "cache.fetch"} {
		if names[name] == 0 {
			t.Errorf("no %s span exported in the trace; exported there: %v", name, names)
		}
	}
}
