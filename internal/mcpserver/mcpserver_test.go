package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// The extension's shapes, as a client decodes them.
type (
	skillResource struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
	skillEntry struct {
		URI         string          `json:"uri"`
		Frontmatter map[string]any  `json:"frontmatter"`
		Resources   []skillResource `json:"resources"`
	}
	listParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	listResult struct {
		mcp.ResultBase
		ResultType string       `json:"resultType"`
		TTLMs      *int         `json:"ttlMs"`
		CacheScope string       `json:"cacheScope"`
		Skills     []skillEntry `json:"skills"`
		NextCursor string       `json:"nextCursor"`
	}
	getParams struct {
		mcp.ParamsBase
		URI string `json:"uri"`
	}
	getResult struct {
		mcp.ResultBase
		ResultType string     `json:"resultType"`
		Skill      skillEntry `json:"skill"`
	}
)

var binaryAsset = []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe, 1, 2, 3}

// library is alice's: two categories, a reference, a script, a binary
// asset, and a skill with extra frontmatter.
func library() *skillstest.Builder {
	b := skillstest.New()
	b.User("alice").
		Skill("writing/release-notes", "release-notes", "Write release notes from merged changes.", "# Release notes\nFollow references/style.md.\n").
		File("writing/release-notes/references/style.md", "# Style\nImperative mood.\n").
		File("writing/release-notes/assets/logo.png", string(binaryAsset)).
		Skill("writing/commit-message", "commit-message", "Write a commit message.", "Subject line.\n\nARGUMENTS: $ARGUMENTS\n").
		Skill("data/csv-summary", "csv-summary", "Summarize a CSV file.", "Run scripts/summarize.py.\n").
		File("data/csv-summary/scripts/summarize.py", "import csv\n")
	b.User("bob").Skill("ops/deploy", "deploy", "Deploy the service.", "Deploy.\n")
	return b
}

type env struct {
	t      testing.TB
	bucket objstore.Bucket
	url    string
	h      *mcpserver.Handler
}

// start serves MCP over the services app.NewServices assembles (the
// catalog, the filesystem and the change feed the binary wires), over bucket.
func start(t testing.TB, bucket objstore.Bucket, tune func(*mcpserver.Config)) *env {
	t.Helper()
	return startWith(t, bucket, tune, nil)
}

// startWith is start with the skills catalog's settings tuned too.
func startWith(t testing.TB, bucket objstore.Bucket, tune func(*mcpserver.Config), tuneSkills func(*skills.Config), opts ...mcpserver.Option) *env {
	t.Helper()
	return startCounting(t, bucket, tune, tuneSkills, nil, opts...)
}

// countingCatalog counts the catalog queries the handler makes, by method.
type countingCatalog struct {
	mcpserver.Catalog
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingCatalog) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
}

func (c *countingCatalog) Page(ctx context.Context, id mounts.Caller, opts skillview.ListOptions, pageSize int32, token string) (skillview.Page, error) {
	c.count("Page")
	return c.Catalog.Page(ctx, id, opts, pageSize, token)
}

func (c *countingCatalog) Get(ctx context.Context, id mounts.Caller, ref string) (skillview.Detail, error) {
	c.count("Get")
	return c.Catalog.Get(ctx, id, ref)
}

// take returns the calls counted so far and starts again.
func (c *countingCatalog) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.calls
	c.calls = map[string]int{}
	return calls
}

// startCounting is startWith counting the handler's catalog queries in
// counter, when set.
func startCounting(t testing.TB, bucket objstore.Bucket, tune func(*mcpserver.Config), tuneSkills func(*skills.Config), counter *countingCatalog, opts ...mcpserver.Option) *env {
	t.Helper()
	return startAuth(t, bucket, auth.Metadata{}, tune, tuneSkills, counter, opts...)
}

// startAuth is startCounting with authn verifying the callers.
func startAuth(t testing.TB, bucket objstore.Bucket, authn auth.Authenticator, tune func(*mcpserver.Config), tuneSkills func(*skills.Config), counter *countingCatalog, opts ...mcpserver.Option) *env {
	t.Helper()
	scfg := app.DefaultConfig()
	lib := skillstest.Library(t, bucket, func(c *skills.Config) {
		c.IndexRefresh = 0 // every listing sees the bucket as it is
		if tuneSkills != nil {
			tuneSkills(c)
		}
		scfg.Skills = *c
	})
	services, err := app.NewServices(scfg, app.Parts{Bucket: bucket, Lib: lib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(services.Close)
	log := slog.New(slog.DiscardHandler)
	var cfg mcpserver.Config
	cfg.RegisterFlags(flagSet())
	cfg.WatchInterval = 20 * time.Millisecond
	if tune != nil {
		tune(&cfg)
	}
	var cat mcpserver.Catalog = lib.Catalog
	if counter != nil {
		counter.Catalog, counter.calls = lib.Catalog, map[string]int{}
		cat = counter
	}
	h, err := mcpserver.New(cat, services.FS, authn, cfg, log, append([]mcpserver.Option{mcpserver.WithFeed(services.Watch)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		h.Close()
	})
	return &env{t: t, bucket: bucket, url: ts.URL, h: h}
}

// userHeader and threadHeader are the identity headers as http.Header
// keys, for headers no well-formed caller sends.
var userHeader, threadHeader = http.CanonicalHeaderKey(auth.UserKey), http.CanonicalHeaderKey(auth.ThreadKey)

func identity(user, thread string) http.Header {
	return grpctest.CallerHeader(user, thread, "")
}

// sessions is the latest protocol revision with sessions, which
// notifications, subscriptions and the session caps need; the Go SDK's
// client speaks the sessionless 2026-07-28 unless told.
var sessions = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// connect opens a session (protocol 2025-11-25).
func (e *env) connect(h http.Header, opts *mcp.ClientOptions) *mcp.ClientSession {
	return e.connectVersion(h, opts, sessions)
}

// connectVersion connects with the client's default revision when
// sopts is nil.
func (e *env) connectVersion(h http.Header, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	must(e.t, mcp.AddSendingCustomMethod[*listParams, *listResult](c, "skills/list"))
	must(e.t, mcp.AddSendingCustomMethod[*getParams, *getResult](c, "skills/get"))
	must(e.t, mcp.AddSendingCustomMethod[*dirParams, *dirResult](c, "resources/directory/read"))
	tr := &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: mcptest.Client(h)}
	s, err := c.Connect(e.t.Context(), tr, sopts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

func flagSet() *flag.FlagSet { return flag.NewFlagSet("test", flag.ContinueOnError) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func listAll(t *testing.T, s *mcp.ClientSession) []skillEntry {
	t.Helper()
	var all []skillEntry
	p := &listParams{}
	for {
		r, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), s, "skills/list", p)
		if err != nil {
			t.Fatal(err)
		}
		if r.ResultType != "complete" || r.TTLMs == nil || r.CacheScope == "" {
			t.Fatalf("skills/list result lacks resultType/ttlMs/cacheScope: %+v", r)
		}
		all = append(all, r.Skills...)
		if r.NextCursor == "" {
			return all
		}
		p = &listParams{Cursor: r.NextCursor}
	}
}

func wantRPCCode(t *testing.T, op string, err error, code int64) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != code {
		t.Fatalf("%s: got %v, want JSON-RPC error %d", op, err, code)
	}
}

func objectBytes(t *testing.T, b objstore.Bucket, key string) []byte {
	t.Helper()
	rc, _, err := b.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var buf bytes.Buffer
	buf.ReadFrom(rc)
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestSkillsExtension runs on both revisions served: 2025-11-25 with
// sessions, 2026-07-28 without (the Go SDK client's default).
func TestSkillsExtension(t *testing.T) {
	for name, sopts := range map[string]*mcp.ClientSessionOptions{"2025-11-25": sessions, "2026-07-28": nil} {
		t.Run(name, func(t *testing.T) {
			testSkillsExtension(t, sopts, name)
		})
	}
}

func testSkillsExtension(t *testing.T, sopts *mcp.ClientSessionOptions, version string) {
	bucket := library().Bucket(t)
	// One skill per page: the cursor must carry the listing through.
	e := start(t, bucket, func(c *mcpserver.Config) { c.SkillsPageSize = 1 })
	s := e.connectVersion(identity("alice", "t1"), nil, sopts)
	if got := s.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}

	caps := s.InitializeResult().Capabilities
	if _, ok := caps.Extensions["io.modelcontextprotocol/skills"]; !ok || caps.Resources == nil {
		t.Fatalf("capabilities = %+v, want the skills extension and resources", caps)
	}

	skillsListed := listAll(t, s)
	var uris []string
	for _, sk := range skillsListed {
		uris = append(uris, sk.URI)
		for _, r := range sk.Resources {
			key := "alice/skills/" + strings.TrimPrefix(r.URI, "skill://")
			data := objectBytes(t, bucket, key)
			if r.Digest != sha(data) || r.Size != int64(len(data)) {
				t.Errorf("%s: digest %s size %d, want %s %d", r.URI, r.Digest, r.Size, sha(data), len(data))
			}
		}
	}
	slices.Sort(uris)
	want := []string{"skill://data/csv-summary/SKILL.md", "skill://writing/commit-message/SKILL.md", "skill://writing/release-notes/SKILL.md"}
	if !slices.Equal(uris, want) {
		t.Fatalf("skills/list URIs = %v, want %v (alice's only)", uris, want)
	}

	g, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), s, "skills/get", &getParams{URI: "skill://writing/release-notes/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, r := range g.Skill.Resources {
		files = append(files, r.URI)
	}
	wantFiles := []string{
		"skill://writing/release-notes/SKILL.md",
		"skill://writing/release-notes/assets/logo.png",
		"skill://writing/release-notes/references/style.md",
	}
	if !slices.Equal(files, wantFiles) || g.Skill.Frontmatter["name"] != "release-notes" || g.ResultType != "complete" {
		t.Fatalf("skills/get = %+v, want files %v", g.Skill, wantFiles)
	}

	for uri, key := range map[string]string{
		"skill://writing/release-notes/SKILL.md":            "alice/skills/writing/release-notes/SKILL.md",
		"skill://writing/release-notes/references/style.md": "alice/skills/writing/release-notes/references/style.md",
	} {
		r, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Contents[0]; c.Text != string(objectBytes(t, bucket, key)) || c.MIMEType != "text/markdown" {
			t.Errorf("read %s = %q (%s)", uri, c.Text, c.MIMEType)
		}
	}
	r, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://writing/release-notes/assets/logo.png"})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Contents[0]; !bytes.Equal(c.Blob, binaryAsset) || c.Text != "" || c.MIMEType != "image/png" {
		t.Errorf("binary file read as %+v, want a blob", c)
	}

	tmpl, err := s.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || !strings.HasPrefix(tmpl.ResourceTemplates[0].URITemplate, "skill://") {
		t.Fatalf("templates = %+v, %v", tmpl, err)
	}

	// The extension's error for anything not served: Invalid params.
	for _, uri := range []string{
		"skill://writing/no-such/SKILL.md",
		"skill://release-notes/SKILL.md", // a name, not the skill's path
		"skill://writing/release-notes",  // not a SKILL.md
		"skill://ops/deploy/SKILL.md",    // bob's
	} {
		_, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), s, "skills/get", &getParams{URI: uri})
		wantRPCCode(t, "skills/get "+uri, err, jsonrpc.CodeInvalidParams)
	}
	for _, uri := range []string{
		"skill://writing/release-notes/missing.md",
		"skill://writing/../../bob/skills/ops/deploy/SKILL.md",
		"skill://ops/deploy/SKILL.md",
		"skill://writing/release-notes", // a directory
	} {
		_, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		wantRPCCode(t, "read "+uri, err, jsonrpc.CodeInvalidParams)
	}
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	r, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.(*mcp.TextContent).Text)
	}
	return b.String(), r.IsError
}

func TestTools(t *testing.T) {
	e := start(t, library().Bucket(t), nil)
	s := e.connect(identity("alice", "t1"), nil)

	tools, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil || tl.Description == "" {
			t.Errorf("%s lacks an input schema or description", tl.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"edit_file", "glob", "grep", "list_skills", "load_skill", "ls", "read_file", "read_skill_file", "search_skills", "write_file"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	for _, c := range []struct {
		name    string
		args    map[string]any
		want    string // in the text
		wantErr bool
	}{
		{"list_skills", nil, "release-notes", false},
		{"list_skills", map[string]any{"category": "data"}, "csv-summary", false},
		{"load_skill", map[string]any{"skill": "commit-message", "arguments": "fix login"}, "ARGUMENTS: fix login", false},
		{"load_skill", map[string]any{"skill": "no-such"}, "Error (NOT_FOUND): ", true},
		{"read_skill_file", map[string]any{"skill": "release-notes", "path": "references/style.md"}, "Imperative mood.", false},
		{"read_skill_file", map[string]any{"skill": "release-notes", "path": "assets/logo.png"}, "Error (FAILED_PRECONDITION): ", true},
		{"search_skills", map[string]any{"query": "CSV file"}, "csv-summary", false},
		{"write_file", map[string]any{"path": "/workspace/a.md", "content": "one\ntwo\nthree\n"}, "Wrote 14 bytes", false},
		{"write_file", map[string]any{"path": "/skills/x.md", "content": "x"}, "Error (PERMISSION_DENIED): ", true},
		{"edit_file", map[string]any{"path": "/workspace/a.md", "old_string": "two", "new_string": "TWO"}, "Replaced 1", false},
		{"edit_file", map[string]any{"path": "/workspace/a.md", "old_string": "absent", "new_string": "x"}, "Error (FAILED_PRECONDITION): ", true},
		{"read_file", map[string]any{"path": "/workspace/a.md", "offset": 1, "limit": 1}, "2\tTWO\n[lines 2-2 of 3; continue with offset=2]", false},
		{"read_file", map[string]any{"path": "/workspace/../../bob/x"}, "Error (INVALID_ARGUMENT): ", true},
		{"read_file", map[string]any{"path": "/workspace/none.md"}, "Error (NOT_FOUND): ", true},
		{"ls", map[string]any{"path": "/workspace"}, "/workspace/a.md\t14", false},
		{"ls", map[string]any{"path": "/skills/writing"}, "/skills/writing/release-notes/", false},
		{"glob", map[string]any{"pattern": "**/*.md", "path": "/skills/writing"}, "/skills/writing/release-notes/references/style.md", false},
		{"glob", map[string]any{"pattern": "a/../../x"}, "Error (INVALID_ARGUMENT): ", true},
		{"grep", map[string]any{"pattern": "TWO", "path": "/workspace"}, "/workspace/a.md:2: TWO", false},
		{"grep", map[string]any{"pattern": "(", "regex": true}, "Error (INVALID_ARGUMENT): ", true},
	} {
		text, isErr := callTool(t, s, c.name, c.args)
		if isErr != c.wantErr || !strings.Contains(text, c.want) {
			t.Errorf("%s %v = %q (error %v), want %q (error %v)", c.name, c.args, text, isErr, c.want, c.wantErr)
		}
	}
	// Given the task, list_skills starts with the skill most relevant to it,
	// which does not lead the listing without one.
	if text, _ := callTool(t, s, "list_skills", nil); strings.HasPrefix(text, "<available_skills>\n<skill>\n<name>csv-summary</name>") {
		t.Fatalf("list_skills starts with csv-summary without a query: %q", text)
	}
	if text, _ := callTool(t, s, "list_skills", map[string]any{"query": "summarize the columns of a CSV file"}); !strings.HasPrefix(text, "<available_skills>\n<skill>\n<name>csv-summary</name>") {
		t.Errorf("list_skills with a query = %q, want csv-summary first", text)
	}
	// A call that breaks the input schema is refused before any RPC.
	if _, isErr := callTool(t, s, "read_file", map[string]any{"path": 3}); !isErr {
		t.Error("read_file with a numeric path succeeded")
	}
}

func TestIdentity(t *testing.T) {
	e := start(t, library().Bucket(t), nil)
	t1 := e.connect(identity("alice", "t1"), nil)
	t2 := e.connect(identity("alice", "t2"), nil)
	bob := e.connect(identity("bob", "t1"), nil)

	if _, isErr := callTool(t, t1, "write_file", map[string]any{"path": "/workspace/s.md", "content": "t1 only"}); isErr {
		t.Fatal("write failed")
	}
	for name, s := range map[string]*mcp.ClientSession{"another thread": t2, "another user": bob} {
		if text, isErr := callTool(t, s, "read_file", map[string]any{"path": "/workspace/s.md"}); !isErr {
			t.Errorf("%s read alice's t1 file: %q", name, text)
		}
	}
	if got := listAll(t, bob); len(got) != 1 || got[0].URI != "skill://ops/deploy/SKILL.md" {
		t.Errorf("bob lists %+v, want his own skill only", got)
	}

	post := func(h http.Header, sessionID string) int {
		req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sessionID != "" {
			req.Header.Set("Mcp-Session-Id", sessionID)
			req.Header.Set("Mcp-Protocol-Version", t1.InitializeResult().ProtocolVersion)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Callers the authenticator refuses get no session: no identity, a
	// user without a thread, a user given twice.
	for name, h := range map[string]http.Header{
		"no identity":   {},
		"no thread":     {userHeader: {"alice"}},
		"repeated user": {userHeader: {"alice", "bob"}, threadHeader: {"t1"}},
	} {
		if code := post(h, ""); code != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, code)
		}
	}
	// IDs the mount table refuses are a bad request, before any session.
	for _, h := range []http.Header{identity("../bob", "t1"), identity("alice", "a/b"), grpctest.CallerHeader("alice", "t1", "..")} {
		if code := post(h, ""); code != http.StatusBadRequest {
			t.Errorf("%v: HTTP %d, want 400", h, code)
		}
	}
	if t1.ID() == "" {
		t.Fatal("no session ID: nothing to pin")
	}
	// A session answers only the identity that opened it.
	if code := post(identity("alice", "t1"), t1.ID()); code != http.StatusOK {
		t.Errorf("own session: HTTP %d, want 200", code)
	}
	for _, h := range []http.Header{identity("bob", "t1"), identity("alice", "t2")} {
		if code := post(h, t1.ID()); code != http.StatusNotFound {
			t.Errorf("%v on alice t1's session: HTTP %d, want 404", h, code)
		}
	}
}

func TestLibraryChangeNotifies(t *testing.T) {
	bucket := library().Bucket(t)
	e := start(t, bucket, nil)
	changed := make(chan struct{}, 10)
	updated := make(chan string, 10)
	s := e.connect(identity("alice", "t1"), &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	const styleURI = "skill://writing/release-notes/references/style.md"
	must(t, s.Subscribe(t.Context(), &mcp.SubscribeParams{URI: styleURI}))
	listAll(t, s)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// Out of band, as an S3 tool would: a new skill, then a changed file.
	objstoretest.Put(t, bucket, "alice/skills/writing/haiku/SKILL.md", skillstest.SkillMD("haiku", "Write a haiku.", "5-7-5\n"))
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/resources/list_changed after a skill was added")
	}
	var found bool
	for _, sk := range listAll(t, s) {
		found = found || sk.URI == "skill://writing/haiku/SKILL.md"
	}
	if !found {
		t.Fatal("the new skill is not listed after the notification")
	}

	objstoretest.Put(t, bucket, "alice/skills/writing/release-notes/references/style.md", "# Style\nChanged.\n")
	select {
	case uri := <-updated:
		if uri != styleURI {
			t.Fatalf("updated %s, want %s", uri, styleURI)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated after a subscribed file changed")
	}
}

func TestCloseStopsWatchers(t *testing.T) {
	e := start(t, memory.New(), nil)
	e.connect(identity("alice", "t1"), nil)
	done := make(chan struct{})
	go func() { e.h.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a session open: a watcher does not stop")
	}
}

func TestSessionsPerIdentityCapped(t *testing.T) {
	e := start(t, library().Bucket(t), func(c *mcpserver.Config) { c.MaxSessions = 2 })
	first := e.connect(identity("alice", "t1"), nil)
	e.connect(identity("alice", "t1"), nil)

	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	third := func() error {
		tr := &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: mcptest.Client(identity("alice", "t1"))}
		s, err := c.Connect(t.Context(), tr, sessions)
		if err == nil {
			s.Close()
		}
		return err
	}
	if err := third(); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("a third session of alice t1: %v, want refused as too many", err)
	}
	// The cap is per identity: another thread opens its own.
	e.connect(identity("alice", "t2"), nil)
	// Ending a session (HTTP DELETE) makes room.
	must(t, first.Close())
	if err := third(); err != nil {
		t.Fatalf("after one session ended: %v", err)
	}
}

// A search whose reply the catalog cut to its byte budget says so to the
// model.
func TestSearchToolSaysWhenCut(t *testing.T) {
	b := skillstest.New()
	for _, name := range []string{"one", "two", "three"} {
		b.User("alice").File("big/"+name+"/SKILL.md", "---\nname: "+name+"\ndescription: A skill with long notes.\nnotes: "+strings.Repeat("lorem ipsum ", 2000)+"\n---\n# "+name+"\n")
	}
	e := startWith(t, b.Bucket(t), nil, func(c *skills.Config) { c.MaxPageBytes = 30 << 10 })
	s := e.connect(identity("alice", "t1"), nil)
	text, isErr := callTool(t, s, "search_skills", map[string]any{"query": "long notes"})
	if isErr || strings.Count(text, "\n- ") != 0 || !strings.HasPrefix(text, "- ") || !strings.Contains(text, "Weaker matches were left out") {
		t.Errorf("search_skills = %q (error %v), want one skill and a note that more were left out", text, isErr)
	}
}

// One server answers every sessionless (2026-07-28) request: each caller
// still sees only their own library, by their own request's identity,
// alongside sessions of the older revision.
func TestSessionlessIdentities(t *testing.T) {
	e := start(t, library().Bucket(t), nil)
	alice := e.connectVersion(identity("alice", "t1"), nil, nil)
	bob := e.connectVersion(identity("bob", "t1"), nil, nil)
	old := e.connect(identity("alice", "t2"), nil)
	if v := alice.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	if alice.ID() != "" {
		t.Fatalf("a sessionless client got session ID %q", alice.ID())
	}
	// Nothing is watched for a sessionless caller, so nothing is promised.
	if caps := alice.InitializeResult().Capabilities; caps.Resources == nil || caps.Resources.ListChanged || caps.Resources.Subscribe {
		t.Fatalf("sessionless resources capability %+v, want neither listChanged nor subscribe", caps.Resources)
	}
	for range 3 { // interleaved, so no request borrows another's identity
		for who, s := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob, "alice (2025-11-25)": old} {
			var uris []string
			for _, sk := range listAll(t, s) {
				uris = append(uris, sk.URI)
			}
			slices.Sort(uris)
			want := []string{"skill://data/csv-summary/SKILL.md", "skill://writing/commit-message/SKILL.md", "skill://writing/release-notes/SKILL.md"}
			if who == "bob" {
				want = []string{"skill://ops/deploy/SKILL.md"}
			}
			if !slices.Equal(uris, want) {
				t.Fatalf("%s lists %v, want %v", who, uris, want)
			}
		}
	}
	_, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://writing/release-notes/SKILL.md"})
	wantRPCCode(t, "bob reading alice's skill", err, jsonrpc.CodeInvalidParams)
}

// The extension reads the catalog, not the files: a skills/list page is
// one catalog page (its skills carry every manifest and frontmatter), and
// skills/get one catalog Get, however many skills and files there are.
func TestExtensionReadsTheCatalog(t *testing.T) {
	counter := &countingCatalog{}
	e := startCounting(t, library().Bucket(t), func(c *mcpserver.Config) { c.SkillsPageSize = 2 }, nil, counter)
	s := e.connectVersion(identity("alice", "t1"), nil, nil)
	counter.take()
	if n := len(listAll(t, s)); n != 3 {
		t.Fatalf("listed %d skills, want 3", n)
	}
	if calls := counter.take(); len(calls) != 1 || calls["Page"] != 2 {
		t.Fatalf("two skills/list pages made %v, want exactly 2 catalog pages", calls)
	}
	if _, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), s, "skills/get", &getParams{URI: "skill://writing/release-notes/SKILL.md"}); err != nil {
		t.Fatal(err)
	}
	if calls := counter.take(); len(calls) != 1 || calls["Get"] != 1 {
		t.Fatalf("skills/get made %v, want exactly 1 catalog Get", calls)
	}
}

// Every skills/list and resources/list page carries the catalog's digest
// of the caller's library in _meta: the same on every page, a new one when
// a file changes.
func TestListingCarriesLibraryDigest(t *testing.T) {
	bucket := library().Bucket(t)
	e := start(t, bucket, func(c *mcpserver.Config) { c.SkillsPageSize = 1 })
	s := e.connectVersion(identity("alice", "t1"), nil, nil)
	// withResources adds resources/list's (only once: the client keeps a
	// listing for its ttlMs).
	digests := func(withResources bool) map[string]bool {
		seen := map[string]bool{}
		p := &listParams{}
		for {
			r, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), s, "skills/list", p)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := r.Meta["dev.skillsvc/libraryDigest"].(string)
			seen[d] = true
			if r.NextCursor == "" {
				break
			}
			p = &listParams{Cursor: r.NextCursor}
		}
		if withResources {
			res, err := s.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := res.Meta["dev.skillsvc/libraryDigest"].(string)
			seen[d] = true
		}
		return seen
	}
	first := digests(true)
	if len(first) != 1 {
		t.Fatalf("library digests across pages: %v, want one", first)
	}
	var before string
	for d := range first {
		before = d
	}
	if !strings.HasPrefix(before, "sha256:") {
		t.Fatalf("library digest %q, want sha256:…", before)
	}
	objstoretest.Put(t, bucket, "alice/skills/writing/release-notes/references/style.md", "# Style\nChanged.\n")
	after := digests(false)
	if len(after) != 1 || after[before] {
		t.Fatalf("after a file changed, digests %v, want one other than %s", after, before)
	}
}
