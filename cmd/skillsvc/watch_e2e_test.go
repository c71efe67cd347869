package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// watcher reads a WatchSkills stream in the background.
type watcher struct {
	t      *testing.T
	cancel context.CancelFunc
	msgs   chan *skillsvcv1.WatchSkillsResponse
	err    chan error
}

func watchOn(t *testing.T, ctx context.Context, c skillsvcv1.SkillsServiceClient, since string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	st, err := c.WatchSkills(ctx, &skillsvcv1.WatchSkillsRequest{SinceDigest: since})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{t: t, cancel: cancel, msgs: make(chan *skillsvcv1.WatchSkillsResponse, 64), err: make(chan error, 1)}
	go func() {
		for {
			m, err := st.Recv()
			if err != nil {
				w.err <- err
				return
			}
			w.msgs <- m
		}
	}()
	return w
}

// watchTimeout bounds the wait for a message only a lost change would
// reach.
const watchTimeout = 30 * time.Second

// next is the stream's next message.
func (w *watcher) next() *skillsvcv1.WatchSkillsResponse {
	w.t.Helper()
	select {
	case m := <-w.msgs:
		return m
	case err := <-w.err:
		w.t.Fatalf("watch ended: %v", err)
	case <-time.After(watchTimeout):
		w.t.Fatal("no WatchSkills message")
	}
	return nil
}

// until reads messages until the changes seen since the call include want
// ("ADDED name", …), and returns the last message's digest. A change may
// arrive with others, or over several messages: the feed coalesces.
func (w *watcher) until(start time.Time, what string, want ...string) string {
	w.t.Helper()
	var seen []string
	for {
		m := w.next()
		for _, c := range m.GetChanges() {
			seen = append(seen, strings.TrimPrefix(c.GetKind().String(), "KIND_")+" "+c.GetName())
		}
		if !slices.ContainsFunc(want, func(s string) bool { return !slices.Contains(seen, s) }) {
			w.t.Logf("%s: seen after %v", what, time.Since(start).Round(time.Millisecond))
			return m.GetLibraryDigest()
		}
	}
}

// TestWatchAcrossReplicas runs two binaries on one bucket and one Redis; a
// watcher on B sees a change made through A's API (AdminService's
// PutLibraryFile, LibraryService's publish and delete), a SKILL.md put
// with `aws s3 cp`, a skill disabled and enabled on A, resumes on A after a
// disconnect, and B's drain ends its watches at once.
//
// With bucket notifications the replicas serve their indexes for ten
// minutes: only the events and the replicas' topic can bring a change in
// time. Without them an `aws s3 cp` is seen when a look at the library
// revalidates its index, within about --skills.index-refresh and a half:
// the test sets the refresh to a second so it waits little (the default is
// 5s).
func TestWatchAcrossReplicas(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events bool
	}{
		{"bucket notifications", true},
		{"no bucket notifications", false},
	} {
		t.Run(tc.name, func(t *testing.T) { watchAcrossReplicas(t, tc.events) })
	}
}

func watchAcrossReplicas(t *testing.T, events bool) {
	const target = "skillsvc"
	awsCLI := testserver.AWSCLI(t)
	red := testserver.SharedRedis(t)
	var srv *testserver.MinIO
	var upstream atomic.Pointer[url.URL]
	var extra []string
	if events {
		// As TestEventsReachEveryReplica: MinIO posts to A through a proxy.
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u := upstream.Load()
			if u == nil {
				http.Error(w, "no replica yet", http.StatusServiceUnavailable)
				return
			}
			p := httputil.NewSingleHostReverseProxy(u)
			p.ErrorLog = log.New(io.Discard, "", 0)
			p.ServeHTTP(w, r)
		}))
		t.Cleanup(hook.Close)
		srv = testserver.StartMinIO(t, testserver.WebhookEnv(target, hook.URL+"/events/s3", webhookToken)...)
		tokenFile := filepath.Join(t.TempDir(), "webhook-token")
		if err := os.WriteFile(tokenFile, []byte(webhookToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		extra = []string{"--skills.index-refresh=10m", "--skills.index-max-stale=10m", "--events.webhook-token-file=" + tokenFile}
	} else {
		srv = testserver.SharedMinIO(t)
		extra = []string{"--skills.index-refresh=1s"}
	}
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	if events {
		srv.NotifyWebhook(t, bucket, target)
	}
	args := s3Flags(srv, bucket, append(redisFlags(red, newKeyPrefix()), extra...)...)
	a := startBinary(t, minioEnv(srv), args...)
	b := startBinary(t, minioEnv(srv), args...)
	upstream.Store(&url.URL{Scheme: "http", Host: a.httpAddr})
	bMetrics := metricsFor(t, b)
	if events {
		pollUntil(t, 30*time.Second, "B subscribed to the other replicas' invalidations", func() bool {
			return bMetrics.value(t, "skillsvc_events_resyncs_total") >= 1
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	connA, connB := dial(t, a.addr), dial(t, b.addr)
	skillsA, skillsB := skillsvcv1.NewSkillsServiceClient(connA), skillsvcv1.NewSkillsServiceClient(connB)
	adminA := skillsvcv1.NewAdminServiceClient(connA)
	libraryA := skillsvcv1.NewLibraryServiceClient(connA)

	w := watchOn(t, alice, skillsB, "")
	first := w.next()
	list, err := skillsB.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if first.GetLibraryDigest() != list.GetLibraryDigest() || len(first.GetChanges()) != 0 {
		t.Fatalf("first message %v, want B's listing digest %s and no changes", first, list.GetLibraryDigest())
	}

	// (1) Through A's API: each way of publishing (and removing) a skill,
	// and what a watcher on B must see.
	for _, write := range []struct {
		name string
		do   func() error
		want string
	}{
		{"AdminService.PutLibraryFile", func() error {
			_, err := adminA.PutLibraryFile(alice, &skillsvcv1.PutLibraryFileRequest{
				Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "haiku/SKILL.md",
				Data: []byte("---\nname: haiku\ndescription: Write a haiku.\n---\n5-7-5\n"),
			})
			return err
		}, "ADDED haiku"},
		{"LibraryService.PublishSkill", func() error {
			_, err := pushFolder(alice, libraryA, &skillsvcv1.PublishSkillHeader{Name: "limerick", Category: "poems"},
				map[string]string{"SKILL.md": skillMDOf("limerick", "Write a limerick.", "AABBA\n"), "rhymes.md": "day, way\n"})
			return err
		}, "ADDED limerick"},
		{"LibraryService.PublishSkill of a new version", func() error {
			_, err := pushFolder(alice, libraryA, &skillsvcv1.PublishSkillHeader{Name: "limerick", Category: "poems"},
				map[string]string{"SKILL.md": skillMDOf("limerick", "Write a limerick, five lines.", "AABBA\n")})
			return err
		}, "CHANGED limerick"},
		{"LibraryService.DeleteSkill", func() error {
			_, err := libraryA.DeleteSkill(alice, &skillsvcv1.DeleteSkillRequest{Name: "limerick"})
			return err
		}, "REMOVED limerick"},
	} {
		start := time.Now()
		if err := write.do(); err != nil {
			t.Fatalf("%s: %v", write.name, err)
		}
		w.until(start, write.name+" on A, on B", write.want)
	}

	// (2) Straight into the bucket.
	aws := func(args ...string) time.Time {
		t.Helper()
		cmd := exec.CommandContext(ctx, awsCLI, append([]string{"--endpoint-url", srv.Endpoint, "s3"}, args...)...)
		cmd.Env = srv.AWSEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("aws s3 %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return time.Now()
	}
	skill := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: changelog\ndescription: Write the changelog.\n---\nList the changes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	listChanged := make(chan struct{}, 16)
	mcpClient := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
	})
	session, err := mcpClient.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + b.httpAddr + "/mcp", HTTPClient: mcptest.Client(grpctest.CallerHeader("alice", "t2", "")),
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // notifications need sessions
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	uploaded := aws("cp", "--only-show-errors", skill, "s3://"+bucket+"/alice/skills/changelog/SKILL.md")
	w.until(uploaded, "aws s3 cp of a SKILL.md, on B", "ADDED changelog")
	select {
	case <-listChanged:
		t.Logf("aws s3 cp of a SKILL.md, on B's MCP session: list_changed after %v", time.Since(uploaded).Round(time.Millisecond))
	case <-time.After(watchTimeout):
		t.Fatal("no notifications/resources/list_changed on B's MCP session after an aws s3 cp")
	}

	// (3) Disabled and enabled on A.
	for _, enabled := range []bool{false, true} {
		start := time.Now()
		if _, err := skillsA.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: "notes", Enabled: enabled}); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "DISABLED notes", true: "ENABLED notes"}[enabled]
		w.until(start, want+" on A, on B", want)
	}

	// A watch ends; meanwhile a skill goes; the client resumes on the
	// other replica from the last digest it saw.
	digest := func() string {
		l, err := skillsB.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return l.GetLibraryDigest()
	}()
	w.cancel()
	removed := aws("rm", "--only-show-errors", "s3://"+bucket+"/alice/skills/changelog/SKILL.md")
	resumed := watchOn(t, alice, skillsA, digest)
	m := resumed.next()
	if m.GetReset_() {
		t.Fatalf("resume on A from a digest B's watcher saw: reset")
	}
	seen := m.GetChanges()
	if len(seen) == 0 {
		// A had not seen the removal yet when it answered: it follows.
		resumed.until(removed, "the removal after resuming", "REMOVED changelog")
	} else if len(seen) != 1 || seen[0].GetKind() != skillsvcv1.SkillChange_KIND_REMOVED || seen[0].GetName() != "changelog" {
		t.Fatalf("resumed with %v, want changelog removed", seen)
	}

	if !events {
		return
	}
	// The per-caller bound (--watch.max-per-user, 8 by default).
	for range 8 {
		watchOn(t, alice, skillsB, "").next()
	}
	_, err = func() (*skillsvcv1.WatchSkillsResponse, error) {
		st, err := skillsB.WatchSkills(alice, &skillsvcv1.WatchSkillsRequest{})
		if err != nil {
			return nil, err
		}
		return st.Recv()
	}()
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a ninth watch of alice on B: %v, want RESOURCE_EXHAUSTED", err)
	}
	// Over JSON: newline-delimited messages from grpc-gateway.
	watchJSON(t, ctx, b.httpAddr, "bob")

	// B drains: its watches end at once with UNAVAILABLE, and B's graceful
	// stop completes, which open watches would otherwise hold until
	// --shutdown-timeout (15s) and its forced stop; B's log says which.
	drained := watchOn(t, grpctest.AsCaller(ctx, "bob", "t1", ""), skillsB, "")
	drained.next()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-drained.err:
		if status.Code(err) != codes.Unavailable {
			t.Errorf("a watch when B drains: %v, want UNAVAILABLE", err)
		}
	case <-time.After(watchTimeout):
		t.Fatal("a watch did not end when B drained")
	}
	select {
	case err := <-b.done:
		if err != nil {
			t.Errorf("B's exit: %v", err)
		}
		if strings.Contains(b.output(), "graceful stop timed out") {
			t.Errorf("B's graceful stop timed out with watches open:\n%s", b.output())
		}
	case <-time.After(watchTimeout):
		t.Fatal("B did not exit")
	}
}

// watchJSON opens WatchSkills over the JSON gateway and reads its first
// line: {"result": {"libraryDigest": …}}.
func watchJSON(t *testing.T, ctx context.Context, httpAddr, user string) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+httpAddr+"/skillsvc.v1.SkillsService/WatchSkills", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(auth.UserKey, user)
	req.Header.Set(auth.ThreadKey, "t1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("JSON WatchSkills: %s %s", resp.Status, b)
	}
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil {
		t.Fatalf("JSON WatchSkills: reading the first line: %v", err)
	}
	var msg struct {
		Result struct {
			LibraryDigest string `json:"libraryDigest"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &msg); err != nil || !strings.HasPrefix(msg.Result.LibraryDigest, "sha256:") {
		t.Fatalf("JSON WatchSkills first line %s: %v", line, err)
	}
}
