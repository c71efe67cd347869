package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/gateway"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// counting is auth.Metadata counting its verifications.
type counting struct {
	auth.Metadata
	n atomic.Int64
}

func (c *counting) Authenticate(ctx context.Context, h auth.Headers) (auth.Principal, error) {
	c.n.Add(1)
	return c.Metadata.Authenticate(ctx, h)
}

// serve returns the gateway over the services assembled as the binary
// assembles them, called in process (server.InProcess) through the
// interceptor chain with authn.
func serve(t *testing.T, authn auth.Authenticator) *httptest.Server {
	t.Helper()
	files := skillstest.New()
	files.Shared().Skill("release-notes", "", "Writes release notes.", "Group by type.\n").
		File("release-notes/references/style.md", "Short lines.\n")
	bucket := files.Bucket(t)
	cfg := app.DefaultConfig()
	lib := skillstest.Library(t, bucket, func(c *skills.Config) {
		skillstest.Indexed(time.Hour)(c) // warm: ListSkills answers with the reply it kept, encoded
		cfg.Skills = *c
	})
	services, err := app.NewServices(cfg, app.Parts{Bucket: bucket, Lib: lib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(services.Close)
	h, err := gateway.New(t.Context(), server.InProcess(server.Chain{Log: slog.New(slog.DiscardHandler), Auth: authn, Mounts: mounts.Default()}, services.Register))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func post(t *testing.T, ts *httptest.Server, method, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/skillsvc.v1."+method, strings.NewReader(body))
	req.Header.Set(auth.UserKey, "alice")
	req.Header.Set(auth.ThreadKey, "t1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestJSONAuthenticatesOnce: a JSON request, unary or streaming, is
// authenticated once, by the interceptor chain; nothing before it or
// after it verifies the caller again.
func TestJSONAuthenticatesOnce(t *testing.T) {
	authn := &counting{}
	ts := serve(t, authn)
	for _, tc := range []struct{ name, method, body string }{
		{"unary", "SkillsService/ListSkills", `{}`},
		{"server stream", "SkillsService/ExportSkill", `{"path":"release-notes"}`},
		{"refused", "SkillsService/GetSkill", `{"path":"no-such-skill"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := authn.n.Load()
			post(t, ts, tc.method, tc.body)
			if got := authn.n.Load() - before; got != 1 {
				t.Errorf("%s authenticated %d times, want once", tc.method, got)
			}
		})
	}
}

// TestJSONThroughTheChannel: the JSON answers are as they were over the
// loopback gRPC server it replaced: a reply the catalog kept encoded arrives with its
// fields, the request ID is echoed, and an error is a google.rpc.Status
// with grpc-gateway's HTTP status.
func TestJSONThroughTheChannel(t *testing.T) {
	ts := serve(t, auth.Metadata{})
	for range 2 { // the second page is the kept, encoded reply
		resp, body := post(t, ts, "SkillsService/ListSkills", `{}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"release-notes"`) || resp.Header.Get("X-Request-Id") == "" {
			t.Fatalf("ListSkills: %s (request ID %q) %s", resp.Status, resp.Header.Get("X-Request-Id"), body)
		}
	}
	resp, body := post(t, ts, "SkillsService/GetSkill", `{"path":"no-such-skill"}`)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"code":5`) {
		t.Errorf("GetSkill of a missing skill: %s %s, want 404 and a google.rpc.Status of NOT_FOUND", resp.Status, body)
	}
	resp, body = post(t, ts, "SkillsService/ExportSkill", `{"path":"release-notes"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `{"result":`) || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("ExportSkill: %s (request ID %q) %s, want the stream's messages as results", resp.Status, resp.Header.Get("X-Request-Id"), body)
	}
}
