package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/alloctest"
	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/quota"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// rawPost sends body to the handler in process, on session sid when set.
func rawPost(h http.Handler, ctx context.Context, id http.Header, sid, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
	for k, v := range id {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// openSession initializes a session with raw requests and returns its ID.
func openSession(t testing.TB, h http.Handler, id http.Header) string {
	t.Helper()
	rec := rawPost(h, t.Context(), id, "", mcptest.Initialize)
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q: %s", rec.Code, sid, rec.Body)
	}
	if rec := rawPost(h, t.Context(), id, sid, mcptest.Initialized); rec.Code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d: %s", rec.Code, rec.Body)
	}
	return sid
}

func reply(rec *httptest.ResponseRecorder) (*mcptest.Message, error) {
	return mcptest.Reply(rec.Header().Get("Content-Type"), rec.Body.Bytes())
}

// panicking is a catalog whose Get panics: a stand-in for any bug in a
// handler. (Its other queries are not called.)
type panicking struct{ mcpserver.Catalog }

func (panicking) Get(context.Context, mounts.Caller, string) (skillview.Detail, error) {
	var m map[string]int
	m["boom"]++ // a nil map write, as the nil-params bug was a nil dereference
	return skillview.Detail{}, nil
}

// TestHandlerPanicIsOneRequestsError: a panic in a method handler (run by
// the SDK on a goroutine of its own, where it would end the process) is
// JSON-RPC -32603 for that request, counted, and the session goes on.
func TestHandlerPanicIsOneRequestsError(t *testing.T) {
	var cfg mcpserver.Config
	cfg.RegisterFlags(flagSet())
	panics := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_panics"})
	h, err := mcpserver.New(panicking{}, nil, auth.Metadata{}, cfg, slog.New(slog.DiscardHandler), mcpserver.WithPanicCounter(panics))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	alice := identity("alice", "t1")
	sid := openSession(t, h, alice)
	rec := rawPost(h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://writing/x/SKILL.md"}}`)
	msg, err := reply(rec)
	if err != nil {
		t.Fatal(err)
	}
	if msg == nil || msg.Error == nil || msg.Error.Code != -32603 || msg.Error.Message != "internal error" {
		t.Fatalf("skills/get on a panicking handler = %v, want -32603 internal error", msg)
	}
	if n := testutil.ToFloat64(panics); n != 1 {
		t.Errorf("panics counted %v, want 1", n)
	}
	if msg, err := reply(rawPost(h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)); err != nil || msg == nil || msg.Result == nil {
		t.Fatalf("ping after the panic = %v, %v", msg, err)
	}
}

// TestIdleSessionsReapedNearCeiling: a replica at its session ceiling
// refuses initialize with 429 and Retry-After, then closes the sessions
// idle past --mcp.pressure-idle-timeout, which makes room.
func TestIdleSessionsReapedNearCeiling(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startWith(t, library().Bucket(t), func(c *mcpserver.Config) {
		c.MaxOpenSessions = 4
		// Long enough that no session idles past it while the four open.
		c.PressureIdle = 2 * time.Second
	}, nil, mcpserver.WithRegisterer(reg))
	var sids []string
	for i := range 4 {
		sids = append(sids, openSession(t, e.h, identity("alice", fmt.Sprint("t", i))))
	}
	rec := rawPost(e.h, t.Context(), identity("bob", "t1"), "", mcptest.Initialize)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("initialize on a full replica: HTTP %d, Retry-After %q; want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		rec = rawPost(e.h, t.Context(), identity("bob", "t1"), "", mcptest.Initialize)
		if rec.Code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no idle session was reaped: initialize still HTTP %d", rec.Code)
		}
		time.Sleep(100 * time.Millisecond) // polling for the reaper's tick
	}
	if metricValue(t, reg, "skillsvc_mcp_sessions_reaped_total") == 0 {
		t.Error("skillsvc_mcp_sessions_reaped_total is 0 after reaping")
	}
	// A reaped session is gone: its client is told to start over.
	var gone int
	for i, sid := range sids {
		if rawPost(e.h, t.Context(), identity("alice", fmt.Sprint("t", i)), sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`).Code == http.StatusNotFound {
			gone++
		}
	}
	if gone == 0 {
		t.Error("every idle session still answers after reaping")
	}
}

// metricValue is the value of the counter called name in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// FuzzMCPRequest drives the real /mcp handler, wired to the gRPC services
// over an in-memory library, with arbitrary bodies on an initialized
// session. Properties: no panic (recovered or not), every answer is an
// HTTP status the transport uses with a JSON-RPC body when JSON, and the
// session still answers afterwards.
func FuzzMCPRequest(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"skills/get"}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/get","params":null}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":5}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://writing/../../workspace/x"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{"cursor":"!!"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://writing/release-notes/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"skill://a/%2e%2e/b"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":[]}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/directory/read","params":{"uri":"skill://writing/release-notes"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/directory/read","params":{"uri":"skill://writing/release-notes/","cursor":"d3JpdGluZwA"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/directory/read","params":{"uri":"skill://writing/release-notes/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"x"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/workspace/../x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"(a*)*b","regex":true}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":"x"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":7}`,
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"nope"}]`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`not json`,
		``,
	} {
		f.Add(seed)
	}
	e := start(f, library().Bucket(f), nil)
	alice := identity("alice", "t1")
	sid := openSession(f, e.h, alice)
	f.Fuzz(func(t *testing.T, body string) {
		// A long-lived request (subscriptions/listen) lasts as long as its
		// client: the client here leaves after a second.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		rec := rawPost(e.h, ctx, alice, sid, body)
		switch rec.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		default:
			t.Fatalf("HTTP %d for %q: %s", rec.Code, body, rec.Body)
		}
		if msg, err := reply(rec); err != nil {
			t.Fatalf("%q: %v", body, err)
		} else if msg != nil && msg.Error != nil && msg.Error.Code == -32603 && msg.Error.Message == "internal error" {
			t.Fatalf("%q answered internal error (a recovered panic?)", body)
		}
		// The body may have ended the session (a repeated initialize, say):
		// what matters is that the handler still serves. The ping's ID is
		// one no body can hold: a body's request may still be running after
		// its client left (a slow call on a loaded machine), and an ID in
		// flight is rightly refused as a duplicate.
		ping := rawPost(e.h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":"`+rand.Text()+`","method":"ping"}`)
		if ping.Code != http.StatusOK && ping.Code != http.StatusNotFound {
			t.Fatalf("after %q, ping: HTTP %d: %s", body, ping.Code, ping.Body)
		}
		if ping.Code == http.StatusNotFound {
			sid = openSession(t, e.h, alice)
		}
	})
}

// TestOversizedBodyRefusedAndAudited: a body past --mcp.max-request-bytes
// (at its default) is HTTP 413 and an audit line, and opens nothing.
func TestOversizedBodyRefusedAndAudited(t *testing.T) {
	var lines bytes.Buffer
	e := startWith(t, memory.New(), nil, nil, mcpserver.WithAudit(audit.New(&lines)))
	var def mcpserver.Config
	def.RegisterFlags(flagSet())
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", int(def.MaxRequestBytes)) + `"}}`
	rec := rawPost(e.h, t.Context(), identity("alice", "t1"), "", body)
	if rec.Code != http.StatusRequestEntityTooLarge || rec.Header().Get("Mcp-Session-Id") != "" {
		t.Fatalf("oversized initialize: HTTP %d, session %q; want 413 and none", rec.Code, rec.Header().Get("Mcp-Session-Id"))
	}
	var line map[string]any
	if err := json.Unmarshal(lines.Bytes(), &line); err != nil || line["rpc"] != "/mcp" || line["result"] != "ResourceExhausted" || line["user"] != "alice" {
		t.Errorf("audit line %q (%v), want one /mcp ResourceExhausted line for alice", lines.String(), err)
	}
}

// TestRequestWithoutSessionAnswered: a request that opens no session (the
// SDK client's server/discover probe, a ping) is answered, and leaves no
// session behind.
func TestRequestWithoutSessionAnswered(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startWith(t, memory.New(), nil, nil, mcpserver.WithRegisterer(reg))
	rec := rawPost(e.h, t.Context(), identity("alice", "t1"), "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if msg, err := reply(rec); err != nil || msg == nil || msg.Error != nil || msg.Result == nil {
		t.Fatalf("ping without a session: HTTP %d %+v %v", rec.Code, msg, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "skillsvc_mcp_sessions_open" && mf.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Errorf("sessions open after a session-less ping: %v", mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
}

func TestUnparsableBodies(t *testing.T) {
	e := start(t, memory.New(), nil)
	for _, tc := range []struct {
		body string
		code int64
	}{
		{`not json`, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, -32600},
		{`"a string"`, -32600},
	} {
		rec := rawPost(e.h, t.Context(), identity("alice", "t1"), "", tc.body)
		msg, err := reply(rec)
		if err != nil || rec.Code != http.StatusBadRequest || msg == nil || msg.Error == nil || msg.Error.Code != tc.code {
			t.Errorf("%s: HTTP %d %+v %v, want 400 with %d", tc.body, rec.Code, msg, err, tc.code)
		}
	}
}

// TestRequestIsOneUnitOfLimits: a skills/list page, which makes many calls
// inside (a listing, then each skill's frontmatter, files and digests), is
// admitted once, at one call's cost (quota.CallCost; the storage its calls
// make is charged after it by quota.StorageCost); a request over
// the limits is the distinct limit error, whose data and Retry-After say
// when to retry.
func TestRequestIsOneUnitOfLimits(t *testing.T) {
	cfg := quota.DefaultConfig()
	cfg.Rate, cfg.Burst = 0.05, 1 // ten requests at 0.1, then one every two seconds
	lim, err := quota.New(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lim.Close)
	e := startWith(t, library().Bucket(t), nil, nil, mcpserver.WithLimits(lim))
	alice := identity("alice", "t1")
	sid := openSession(t, e.h, alice) // two units: initialize, and the POST of notifications/initialized
	rec := rawPost(e.h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
	if msg, err := reply(rec); err != nil || msg == nil || msg.Error != nil || !strings.Contains(string(msg.Result), "skill://data/csv-summary/SKILL.md") {
		t.Fatalf("skills/list within the limits: %+v %v", msg, err)
	}
	for range 7 { // the fourth to tenth requests
		rec = rawPost(e.h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		if msg, err := reply(rec); err != nil || msg == nil || msg.Error != nil {
			t.Fatalf("ping within the limits: %+v %v", msg, err)
		}
	}
	rec = rawPost(e.h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	msg, err := reply(rec)
	if err != nil || msg == nil || msg.Error == nil || msg.Error.Code != -32000 || string(msg.ID) != "4" || !strings.Contains(msg.Error.Message, "RESOURCE_EXHAUSTED") {
		t.Fatalf("an eleventh request: HTTP %d %+v %v, want the limit error -32000 for id 4", rec.Code, msg, err)
	}
	var data struct{ RetryAfterMs int64 }
	var raw struct {
		Error struct{ Data json.RawMessage }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil || json.Unmarshal(raw.Error.Data, &data) != nil || data.RetryAfterMs <= 0 || data.RetryAfterMs > 2000 {
		t.Errorf("limit error data %s, want retryAfterMs within the refill of one token", raw.Error.Data)
	}
	if ra := rec.Header().Get("Retry-After"); ra != "1" && ra != "2" {
		t.Errorf("Retry-After %q, want the delay in whole seconds", ra)
	}
	// Another user is not affected.
	bob := identity("bob", "t1")
	openSession(t, e.h, bob)
}

// TestSkillsHostsRejectAreLeftOut: skills/list leaves out the skills a
// strict host rejects a whole listing for (a name that is not the folder's
// or not a skill name, a description over 1,024 characters, more than 512
// files), skills/get says why, and the tools still serve them.
func TestSkillsHostsRejectAreLeftOut(t *testing.T) {
	b := skillstest.New()
	u := b.User("alice")
	u.Skill("writing/good", "good", "A skill hosts accept.", "Body.\n")
	u.File("test/folder-differs/SKILL.md", "---\nname: other-name\ndescription: Named unlike its folder.\n---\nBody.\n")
	u.File("legal/escritura/SKILL.md", "---\nname: Escritura de Compraventa\ndescription: A display name.\n---\nBody.\n")
	u.Skill("long/wordy", "wordy", strings.Repeat("word ", 220), "Body.\n")
	u.Skill("big/many-files", "many-files", "Over the file limit.", "Body.\n")
	for i := range 513 {
		u.File(fmt.Sprintf("big/many-files/assets/%03d.txt", i), "x")
	}
	e := start(t, b.Bucket(t), nil)
	s := e.connect(identity("alice", "t1"), nil)
	got := listAll(t, s)
	if len(got) != 1 || got[0].URI != "skill://writing/good/SKILL.md" {
		t.Fatalf("skills/list = %+v, want only skill://writing/good/SKILL.md", got)
	}
	for uri, why := range map[string]string{
		"skill://test/folder-differs/SKILL.md": "differs from its folder",
		"skill://legal/escritura/SKILL.md":     "not a skill name",
		"skill://long/wordy/SKILL.md":          "description is longer than 1024",
		"skill://big/many-files/SKILL.md":      "over the extension's limits",
	} {
		_, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), s, "skills/get", &getParams{URI: uri})
		wantRPCCode(t, "skills/get "+uri, err, jsonrpc.CodeInvalidParams)
		if !strings.Contains(err.Error(), why) {
			t.Errorf("skills/get %s: %v, want the reason (%s)", uri, err, why)
		}
	}
	if text, isErr := callTool(t, s, "load_skill", map[string]any{"skill": "other-name"}); isErr || !strings.Contains(text, "Body.") {
		t.Errorf("load_skill of a left-out skill = %q (error %v), want it served", text, isErr)
	}
}

// TestBatchBounded: a batch is at most 64 messages, refused before it is
// decoded, so a body of millions of tiny messages allocates little.
func TestBatchBounded(t *testing.T) {
	e := start(t, memory.New(), nil)
	alice := identity("alice", "t1")
	sid := openSession(t, e.h, alice)
	batch := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	// 64 pass the edge (the SDK then refuses batches on this session's
	// revision, 2025-06-18, as the transport specifies).
	if rec := rawPost(e.h, t.Context(), alice, sid, batch(64)); strings.Contains(rec.Body.String(), "at most 64") {
		t.Errorf("a batch of 64 refused by the edge: HTTP %d %s", rec.Code, rec.Body)
	}
	rec := rawPost(e.h, t.Context(), alice, sid, batch(65))
	if msg, err := reply(rec); err != nil || rec.Code != http.StatusBadRequest || msg == nil || msg.Error == nil || msg.Error.Code != -32600 || !strings.Contains(msg.Error.Message, "at most 64") {
		t.Errorf("a batch of 65: HTTP %d %+v %v, want 400 with -32600", rec.Code, msg, err)
	}
	// 8 MiB of "{}," is about 2.8 million messages.
	huge := "[" + strings.Repeat("{},", 8<<20/3) + "{}]"
	var code int
	allocated := alloctest.Bytes(func() { code = rawPost(e.h, t.Context(), alice, sid, huge).Code })
	if code != http.StatusBadRequest {
		t.Errorf("a batch of millions: HTTP %d, want 400", code)
	}
	// The body is read once (and copied by the recorder's request): a few
	// times its size, not the tens of bytes a decoded message takes.
	if allocated > 4*uint64(len(huge)) {
		t.Errorf("a batch of millions allocated %d MiB for a %d MiB body", allocated>>20, len(huge)>>20)
	}
}

// countingLimiter admits everything and counts admissions by user.
type countingLimiter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingLimiter) Acquire(_ context.Context, user string) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[user]++
	return func() {}, nil
}

func (c *countingLimiter) Charge(string, quota.Cost) {}

func (c *countingLimiter) count(user string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[user]
}

// TestWatcherCountsAgainstLimits: the work the library watcher does for an
// identity after a change (stat the files its sessions subscribed to),
// which no call of the client asks for, counts as a request of the
// identity's user, as a client polling the library would.
func TestWatcherCountsAgainstLimits(t *testing.T) {
	lim := &countingLimiter{n: map[string]int{}}
	bucket := library().Bucket(t)
	e := startWith(t, bucket, nil, nil, mcpserver.WithLimits(lim))
	openSession(t, e.h, identity("alice", "t1")) // initialize, notifications/initialized
	before := lim.count("alice")
	objstoretest.Put(t, bucket, "alice/skills/writing/haiku/SKILL.md", skillstest.SkillMD("haiku", "Write a haiku.", "5-7-5\n"))
	deadline := time.Now().Add(10 * time.Second)
	for lim.count("alice") <= before {
		if time.Now().After(deadline) {
			t.Fatalf("alice's limits saw %d requests after a change, %d before; the watcher's work is not counted", lim.count("alice"), before)
		}
		time.Sleep(20 * time.Millisecond) // waiting for the feed's next look
	}
}

// FuzzMCPSessionlessRequest is FuzzMCPRequest on protocol 2026-07-28, which
// the SDK's stateless handler serves: every request stands alone, its
// metadata in _meta and its method in the Mcp-Method header.
func FuzzMCPSessionlessRequest(f *testing.F) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"f","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://writing/release-notes/SKILL.md",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://writing/release-notes/assets/logo.png",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/directory/read","params":{"uri":"skill://writing",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ls","arguments":{"path":"/skills"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list"}`,
	} {
		f.Add(seed)
	}
	e := start(f, library().Bucket(f), nil)
	alice := identity("alice", "t1")
	alice.Set("Mcp-Protocol-Version", "2026-07-28")
	f.Fuzz(func(t *testing.T, body string) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		h := alice.Clone()
		// The header the client sends names the body's method.
		var m struct{ Method string }
		if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" && len(m.Method) < 256 && !strings.ContainsAny(m.Method, "\r\n") {
			h.Set("Mcp-Method", m.Method)
		}
		rec := rawPost(e.h, ctx, h, "", body)
		if rec.Code >= 500 {
			t.Fatalf("HTTP %d for %q: %s", rec.Code, body, rec.Body)
		}
		if strings.Contains(rec.Body.String(), `"code":-32603,"message":"internal error"`) {
			t.Fatalf("%q answered internal error (a recovered panic?): %s", body, rec.Body)
		}
		discover := `{"jsonrpc":"2.0","id":99,"method":"server/discover","params":{` + meta + `}}`
		h = alice.Clone()
		h.Set("Mcp-Method", "server/discover")
		if rec := rawPost(e.h, t.Context(), h, "", discover); rec.Code != http.StatusOK {
			t.Fatalf("after %q, server/discover: HTTP %d: %s", body, rec.Code, rec.Body)
		}
	})
}
