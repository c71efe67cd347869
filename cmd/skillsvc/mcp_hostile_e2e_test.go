package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// mcpRaw posts raw JSON-RPC to a binary's /mcp.
type mcpRaw struct {
	t   *testing.T
	url string
	c   *http.Client
}

func newMCPRaw(t *testing.T, p *proc) mcpRaw {
	// Enough idle connections that a flood reuses them.
	return mcpRaw{t: t, url: "http://" + p.httpAddr + "/mcp", c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}}
}

// post sends body with headers h on session sid (when set) and returns the
// answer and its JSON-RPC message, if any.
func (m mcpRaw) post(h http.Header, sid, body string) (*http.Response, *mcptest.Message) {
	m.t.Helper()
	h = h.Clone()
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
		h.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, data := m.postRaw(h, body)
	msg, err := mcptest.Reply(resp.Header.Get("Content-Type"), []byte(data))
	if err != nil {
		m.t.Fatalf("%.100s: %v", body, err)
	}
	return resp, msg
}

// postRaw sends body with headers h as they are, and returns the answer
// and its body, whatever it holds.
func (m mcpRaw) postRaw(h http.Header, body string) (*http.Response, string) {
	m.t.Helper()
	req, err := http.NewRequest(http.MethodPost, m.url, strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host := h.Get("Host"); host != "" {
		req.Host = host // the header map's Host is not sent
	}
	resp, err := m.c.Do(req)
	if err != nil {
		m.t.Fatalf("POST /mcp: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		m.t.Fatal(err)
	}
	return resp, string(data)
}

// open initializes a session and returns its ID.
func (m mcpRaw) open(h http.Header) string {
	m.t.Helper()
	resp, msg := m.post(h, "", mcptest.Initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" || msg == nil || msg.Error != nil {
		m.t.Fatalf("initialize: HTTP %d, session %q, %+v", resp.StatusCode, sid, msg)
	}
	if resp, _ := m.post(h, sid, mcptest.Initialized); resp.StatusCode != http.StatusAccepted {
		m.t.Fatalf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
	return sid
}

func bearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// mcpLibrary uploads alice's library: file names with a space and with
// non-ASCII characters among them.
func mcpLibrary(t *testing.T, put func(key, body string)) {
	put("alice/skills/writing/release-notes/SKILL.md", "---\nname: release-notes\ndescription: Write release notes.\n---\n# Release notes\n")
	put("alice/skills/writing/release-notes/references/my file.md", "spaced\n")
	put("alice/skills/writing/release-notes/references/résumé.md", "accented\n")
	put("alice/skills/data/csv-summary/SKILL.md", "---\nname: csv-summary\ndescription: Summarize a CSV file.\n---\n# CSV\n")
}

// TestMCPHostileRequestsEndToEnd sends the binary, with its default
// settings in jwt mode, what a hostile or broken host would: every method
// with missing, null and wrongly typed params, skill URIs that are not
// canonical, and requests /mcp must refuse; the process serves on, and
// every refusal is in the audit log.
func TestMCPHostileRequestsEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	mcpLibrary(t, s3Put(t, srv, bucket))
	f := newJWTFixture(t)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f, "--audit.output="+auditFile)...)...)
	m := newMCPRaw(t, p)
	alice := bearerHeader(signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	bob := bearerHeader(signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("bob", "t1", "")))
	sid := m.open(alice)
	alive := func(what string) {
		t.Helper()
		if procExited(p) {
			t.Fatalf("the process exited after %s:\n%s", what, p.output())
		}
		if _, msg := m.post(alice, sid, `{"jsonrpc":"2.0","id":99,"method":"ping"}`); msg == nil || msg.Error != nil {
			t.Fatalf("ping after %s: %+v", what, msg)
		}
	}

	t.Run("malformed params", func(t *testing.T) {
		methods := mcpserver.Methods()
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range methods {
				if !yield(k) {
					return
				}
			}
		})
		variants := []struct {
			name, params string
			wrongType    bool
		}{
			{"missing", "", false}, {"null", `,"params":null`, false},
			{"string", `,"params":"x"`, true}, {"array", `,"params":[]`, true}, {"number", `,"params":5`, true},
		}
		for _, method := range names {
			for _, v := range variants {
				notification := strings.HasPrefix(method, "notifications/")
				id := `"id":7,`
				if notification {
					id = ""
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0",%s"method":%q%s}`, id, method, v.params)
				resp, msg := m.post(alice, sid, body)
				invalid := v.wrongType || methods[method]
				switch {
				case invalid && notification:
					if resp.StatusCode != http.StatusBadRequest || msg == nil || msg.Error == nil || msg.Error.Code != -32602 {
						t.Errorf("%s params %s: HTTP %d %+v, want 400 with -32602", method, v.name, resp.StatusCode, msg)
					}
				case invalid:
					if resp.StatusCode != http.StatusOK || msg == nil || msg.Error == nil || msg.Error.Code != -32602 || string(msg.ID) != "7" {
						t.Errorf("%s params %s: HTTP %d %+v, want -32602 for id 7", method, v.name, resp.StatusCode, msg)
					}
				case msg != nil && msg.Error != nil && (msg.Error.Code == -32602 || msg.Error.Code == -32603):
					t.Errorf("%s params %s (optional): %+v", method, v.name, msg.Error)
				}
			}
			alive(method + " with malformed params")
		}
		// The request that used to end the process, and params of the
		// right JSON type but the wrong shape.
		for _, params := range []string{``, `,"params":null`, `,"params":{}`, `,"params":{"uri":5}`, `,"params":{"uri":""}`} {
			_, msg := m.post(alice, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/get"`+params+`}`)
			if msg == nil || msg.Error == nil || msg.Error.Code != -32602 {
				t.Errorf("skills/get%s = %+v, want -32602", params, msg)
			}
		}
		if _, msg := m.post(alice, sid, `{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}`); msg == nil || msg.Error == nil || msg.Error.Code != -32601 {
			t.Errorf("an unknown method = %+v, want -32601", msg)
		}
		alive("the malformed requests")
	})

	// Protocol 2026-07-28 is served by the SDK's stateless handler: the
	// same table checks its requests, which carry their metadata in each
	// request instead of a session.
	t.Run("sessionless malformed params", func(t *testing.T) {
		modern := alice.Clone()
		modern.Set("Mcp-Protocol-Version", "2026-07-28")
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		for method := range mcpserver.Methods() {
			for _, params := range []string{``, `,"params":null`, `,"params":"x"`, `,"params":[]`, `,"params":{}`, `,"params":{` + meta + `}`, `,"params":{"uri":5,` + meta + `}`, `,"params":{"name":{},"arguments":[],` + meta + `}`} {
				h := modern.Clone()
				h.Set("Mcp-Method", method)
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q%s}`, method, params)
				resp, data := m.postRaw(h, body)
				if resp.StatusCode >= 500 || strings.Contains(data, "-32603") {
					t.Errorf("%s: HTTP %d %.300s", body, resp.StatusCode, data)
				}
			}
			alive(method + " sessionless with malformed params")
		}
	})

	t.Run("skill URIs", func(t *testing.T) {
		if _, msg := m.post(alice, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/workspace/x","content":"workspace secret"}}}`); msg == nil || msg.Error != nil {
			t.Fatalf("write_file: %+v", msg)
		}
		hostile := []string{
			"skill://writing/../../workspace/x",
			"skill://writing/../data/csv-summary/SKILL.md",
			"skill://writing/release-notes/../../data/csv-summary/SKILL.md",
			"skill://writing/%2e%2e/%2e%2e/workspace/x",
			"skill://writing%2F..%2F..%2Fworkspace/x",
			"skill://writing//release-notes/SKILL.md",
			"skill://./writing/release-notes/SKILL.md",
			"skill://writing/release-notes/references/my file.md",
			"skill://writing/release-notes/references/résumé.md",
		}
		for _, uri := range hostile {
			for _, method := range []string{"resources/read", "skills/get", "resources/subscribe"} {
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": method, "params": map[string]any{"uri": uri}})
				_, msg := m.post(alice, sid, string(body))
				if msg == nil || msg.Error == nil || msg.Error.Code != -32602 || strings.Contains(string(msg.Result), "secret") {
					t.Errorf("%s %s = %+v, want -32602", method, uri, msg)
				}
			}
		}
		// The listing percent-encodes names, and the encoded form reads
		// back.
		_, msg := m.post(alice, sid, `{"jsonrpc":"2.0","id":6,"method":"skills/list","params":{}}`)
		if msg == nil || msg.Error != nil {
			t.Fatalf("skills/list: %+v", msg)
		}
		want := map[string]string{
			"skill://writing/release-notes/references/my%20file.md":        "spaced\n",
			"skill://writing/release-notes/references/r%C3%A9sum%C3%A9.md": "accented\n",
		}
		for uri, text := range want {
			if !strings.Contains(string(msg.Result), `"`+uri+`"`) {
				t.Errorf("skills/list does not list %s: %s", uri, msg.Result)
			}
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": map[string]any{"uri": uri}})
			_, got := m.post(alice, sid, string(body))
			var res struct{ Contents []struct{ URI, Text string } }
			if got == nil || got.Error != nil || json.Unmarshal(got.Result, &res) != nil || len(res.Contents) != 1 || res.Contents[0].Text != text || res.Contents[0].URI != uri {
				t.Errorf("resources/read %s = %+v, want %q", uri, got, text)
			}
		}
		alive("the skill URIs")
	})

	t.Run("refusals audited", func(t *testing.T) {
		admin := agentClaims("", "", "")
		delete(admin, "user")
		delete(admin, "thread")
		admin["scope"] = "skillsvc:admin"
		forged := signToken(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 48)), agentClaims("alice", "t1", ""))
		withID := func(h http.Header, rid string) http.Header {
			h = h.Clone()
			h.Set("X-Request-Id", rid)
			return h
		}
		type refusal struct {
			rid, result, user string // user "-": an admin, "": none verified
			status            int
		}
		var want []refusal
		check := func(rid string, h http.Header, sid, body string, status int, result, user string) {
			t.Helper()
			resp, _ := m.post(withID(h, rid), sid, body)
			if resp.StatusCode != status || resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s: HTTP %d (session %q), want %d and no session", rid, resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), status)
			}
			if status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: 429 without Retry-After", rid)
			}
			want = append(want, refusal{rid, result, user, status})
		}
		check("mcp-no-identity", http.Header{}, "", mcptest.Initialize, http.StatusUnauthorized, "Unauthenticated", "")
		check("mcp-forged", bearerHeader(forged), "", mcptest.Initialize, http.StatusUnauthorized, "Unauthenticated", "")
		check("mcp-admin", bearerHeader(signToken(t, jwt.SigningMethodHS256, f.secret, admin)), "", mcptest.Initialize, http.StatusUnauthorized, "Unauthenticated", "-")
		check("mcp-foreign-session", bob, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, http.StatusNotFound, "NotFound", "bob")
		check("mcp-rebinding", http.Header{"Authorization": alice["Authorization"], "Host": {"evil.example"}}, "", mcptest.Initialize, http.StatusForbidden, "PermissionDenied", "alice")
		// Another user than alice, whose earlier requests took much of her
		// per-user rate.
		capped := bearerHeader(signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("dave", "capped", "")))
		var def mcpserver.Config
		def.RegisterFlags(flagSetForTest())
		for range def.MaxSessions {
			m.open(capped)
		}
		check("mcp-over-cap", capped, "", mcptest.Initialize, http.StatusTooManyRequests, "ResourceExhausted", "dave")

		lines := waitAuditLines(t, auditFile, len(want), func(rec map[string]any) bool { return rec["rpc"] == "/mcp" })
		byID := map[string]map[string]any{}
		for _, rec := range lines {
			byID[fmt.Sprint(rec["request_id"])] = rec
		}
		for _, w := range want {
			rec, ok := byID[w.rid]
			switch {
			case !ok:
				t.Errorf("%s (HTTP %d) is not in the audit log", w.rid, w.status)
			case rec["result"] != w.result:
				t.Errorf("%s audited as %v, want %s", w.rid, rec["result"], w.result)
			case w.user == "-" && rec["admin"] != true:
				t.Errorf("%s audited without the admin's principal: %v", w.rid, rec)
			case w.user != "" && w.user != "-" && rec["user"] != w.user:
				t.Errorf("%s audited for user %v, want %s", w.rid, rec["user"], w.user)
			case w.user == "" && rec["authenticated"] != false:
				t.Errorf("%s audited as authenticated: %v", w.rid, rec)
			}
		}
		alive("the refusals")
	})
}

// waitAuditLines polls the audit file until it holds n lines that match
// (the SDK's own refusals are audited just after their answer is sent).
func waitAuditLines(t *testing.T, file string, n int, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(file)
		var got []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("audit line is not JSON: %q", sc.Text())
			}
			if match(rec) {
				got = append(got, rec)
			}
		}
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond) // polling for the audit writes
	}
}

// rssBytes is the resident memory of process pid.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	n, err := testserver.RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMCPSessionsBoundedEndToEnd floods the binary's /mcp, with its default
// limits in jwt mode: one token with ever-changing identity headers opens
// no more than one identity's sessions, the replica as a whole no more
// than --mcp.max-sessions, memory stays bounded, and another tenant's
// calls keep working throughout.
func TestMCPSessionsBoundedEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	mcpLibrary(t, s3Put(t, srv, bucket))
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	m := newMCPRaw(t, p)
	var def mcpserver.Config
	def.RegisterFlags(flagSetForTest())
	token := func(user, thread string) string {
		return signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims(user, thread, ""))
	}

	// Bob works throughout, over gRPC and over his MCP session (2025-11-25:
	// 2026-07-28 has no sessions).
	bobToken := token("bob", "t1")
	bobSession, err := mcp.NewClient(&mcp.Implementation{Name: "bob", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: m.url, HTTPClient: mcptest.Client(bearerHeader(bobToken)),
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer bobSession.Close()
	fsc := skillsvcv1.NewFilesystemServiceClient(dialWithinLimits(t, p.addr))
	var bobCalls, bobFailures atomic.Int64
	var bobErr atomic.Value
	ctx, stopBob := context.WithCancel(t.Context())
	var bobDone sync.WaitGroup
	bobDone.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond) // two calls a tick, within the per-user rate
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_, err := fsc.Write(grpctest.WithBearer(ctx, bobToken), &skillsvcv1.WriteRequest{Path: "/workspace/bob.md", Content: fmt.Sprint(i)})
			if err == nil {
				_, err = bobSession.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "/workspace/bob.md"}})
			}
			if ctx.Err() != nil {
				return
			}
			bobCalls.Add(1)
			if err != nil {
				bobFailures.Add(1)
				bobErr.Store(err)
			}
		}
	})

	// flood sends n initialize requests from 8 workers, each with the
	// headers headersOf(i) gives, and counts the sessions opened. Every
	// other answer is a refusal that says when to retry: a session cap
	// (HTTP 429) or, past the user's rate, the per-user limit (-32000).
	flood := func(n int, headersOf func(i int) http.Header) (opened int) {
		var ok, capped, limited atomic.Int64
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					resp, msg := m.post(headersOf(i), "", mcptest.Initialize)
					switch {
					case resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != "":
						ok.Add(1)
					case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
						capped.Add(1)
					case msg != nil && msg.Error != nil && msg.Error.Code == -32000 && resp.Header.Get("Retry-After") != "":
						limited.Add(1)
					default:
						t.Errorf("initialize %d: HTTP %d %+v", i, resp.StatusCode, msg)
					}
				}
			})
		}
		wg.Wait()
		if int(ok.Load()+capped.Load()+limited.Load()) != n {
			t.Fatalf("%d opened + %d refused by a cap + %d by the rate of %d", ok.Load(), capped.Load(), limited.Load(), n)
		}
		return int(ok.Load())
	}

	rssStart := rssBytes(t, p.cmd.Process.Pid)
	// One token, 10,000 initialize calls, each with other identity headers
	// (which jwt mode ignores): one identity's cap of sessions.
	alice := token("alice", "t1")
	opened := flood(10000, func(i int) http.Header {
		h := bearerHeader(alice)
		h.Set(auth.UserKey, fmt.Sprint("u", i))
		h.Set(auth.ThreadKey, fmt.Sprint("t", i))
		h.Set(auth.TicketKey, fmt.Sprint("k", i))
		return h
	})
	if opened != def.MaxSessions {
		t.Errorf("one token opened %d sessions, want the per-identity cap %d", opened, def.MaxSessions)
	}
	rssCapped := rssBytes(t, p.cmd.Process.Pid)
	// The stated bound: the identity's sessions and the refused flood cost
	// well under 64 MiB (before the fix, 10,000 sessions took ~1 GiB).
	if grew := rssCapped - rssStart; grew > 64<<20 {
		t.Errorf("RSS grew %d MiB over 10,000 initialize calls of one token, want < 64 MiB", grew>>20)
	}

	// Many identities: the replica holds at most --mcp.max-sessions. Two
	// sessions are open already (alice's cap and bob's) so count them in.
	identities := def.MaxOpenSessions/def.MaxSessions + 1
	tokens := make([]string, identities)
	for i := range tokens {
		// A user each, so that no user's rate limit, only the replica's
		// ceiling, stops the flood.
		tokens[i] = token(fmt.Sprint("carol", i), "t1")
	}
	opened = flood(identities*def.MaxSessions, func(i int) http.Header { return bearerHeader(tokens[i/def.MaxSessions]) })
	if total := opened + def.MaxSessions + 1; total != def.MaxOpenSessions {
		t.Errorf("the replica holds %d sessions after the flood, want --mcp.max-sessions = %d", total, def.MaxOpenSessions)
	}
	rssFull := rssBytes(t, p.cmd.Process.Pid)
	t.Logf("RSS: %d MiB at start, %d MiB with one identity capped, %d MiB with %d sessions open (%d KiB a session)",
		rssStart>>20, rssCapped>>20, rssFull>>20, def.MaxOpenSessions, (rssFull-rssCapped)>>10/int64(opened))
	// The default ceiling is meant to fit a 512 MiB pod with room for the
	// caches: a full replica stays under 384 MiB.
	if rssFull > 384<<20 {
		t.Errorf("RSS %d MiB with the replica's sessions full, want < 384 MiB", rssFull>>20)
	}

	stopBob()
	bobDone.Wait()
	if bobCalls.Load() < 10 || bobFailures.Load() != 0 {
		t.Errorf("bob: %d of %d calls failed during the floods (last: %v)", bobFailures.Load(), bobCalls.Load(), bobErr.Load())
	}
	if procExited(p) {
		t.Fatalf("the process exited:\n%s", p.output())
	}
}

// flagSetForTest is a flag set to read a Config's defaults from.
func flagSetForTest() *flag.FlagSet { return flag.NewFlagSet("defaults", flag.ContinueOnError) }

// TestMCPListingWithinDefaultLimits lists a library of 150 skills through
// /mcp with the binary's default per-user limits: each skills/list page
// makes hundreds of calls inside (before, the listing failed at its first
// page with RESOURCE_EXHAUSTED) but costs the caller one request.
func TestMCPListingWithinDefaultLimits(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	const skills = 150
	for i := range skills {
		name := fmt.Sprintf("skill-%03d", i)
		put("alice/skills/bulk/"+name+"/SKILL.md", "---\nname: "+name+"\ndescription: Skill number "+fmt.Sprint(i)+".\n---\n# "+name+"\n")
		put("alice/skills/bulk/"+name+"/references/notes.md", "notes\n")
	}
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	m := newMCPRaw(t, p)
	alice := bearerHeader(signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	sid := m.open(alice)
	var listed, pages int
	cursor := ""
	for {
		params, _ := json.Marshal(map[string]any{"cursor": cursor})
		_, msg := m.post(alice, sid, `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":`+string(params)+`}`)
		if msg == nil || msg.Error != nil {
			t.Fatalf("skills/list page %d: %+v", pages+1, msg)
		}
		var res struct {
			Skills []struct {
				URI       string
				Resources []struct{ URI, Digest string }
			}
			NextCursor string
		}
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Skills {
			if len(s.Resources) != 2 {
				t.Errorf("%s lists %d files, want 2", s.URI, len(s.Resources))
			}
		}
		listed += len(res.Skills)
		pages++
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if listed != skills || pages < 3 {
		t.Errorf("listed %d skills in %d pages, want %d in at least 3", listed, pages, skills)
	}
}
