package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/events"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skills"
)

const token = "s3cr3t-webhook-token-0123456789"

// recorder is a catalog that maps keys as the real one does and records
// what it is asked to invalidate and forget.
type recorder struct {
	mapper *skills.Catalog

	mu          sync.Mutex
	invalidated []layout.Change
	forgot      []layout.Change
	forgotAll   int
	fail        error // Invalidate's answer
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	lib, err := skills.New(memory.New(), mounts.Default(), skills.DefaultConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{mapper: lib.Catalog}
}

func (r *recorder) ChangeOf(key string) layout.Change { return r.mapper.ChangeOf(key) }

func (r *recorder) Invalidate(_ context.Context, ch layout.Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.invalidated = append(r.invalidated, ch)
	return nil
}

func (r *recorder) Forget(ch layout.Change) error {
	if err := ch.Library.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgot = append(r.forgot, ch)
	return nil
}

// changes are what it invalidated so far.
func (r *recorder) changes() []layout.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]layout.Change(nil), r.invalidated...)
}

func (r *recorder) ForgetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgotAll++
}

// fakeTopic records what is published and hands the subscriber's callbacks
// to the test.
type fakeTopic struct {
	mu         sync.Mutex
	published  [][]byte
	fail       error
	onMessage  func([]byte)
	subscribed func()
}

func (f *fakeTopic) Publish(_ context.Context, msg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.published = append(f.published, msg)
	return nil
}

// sent is what was published so far.
func (f *fakeTopic) sent() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.published...)
}

func (f *fakeTopic) Subscribe(onMessage func([]byte), subscribed func()) func() {
	f.onMessage, f.subscribed = onMessage, subscribed
	return func() {}
}

func tokenFile(t *testing.T, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func config(t *testing.T) events.Config {
	t.Helper()
	var cfg events.Config
	cfg.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	cfg.WebhookTokenFile = tokenFile(t, token)
	return cfg
}

func newReceiver(t *testing.T, cfg events.Config, cat events.Catalog, o events.Options) *events.Receiver {
	t.Helper()
	r, err := events.New(cfg, cat, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// post sends body to h with the Authorization header auth ("" for none).
func post(h http.Handler, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/events/s3", strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// notification is an S3 event notification of one record per key, in
// MinIO's spelling.
func notification(bucket, event string, keys ...string) string {
	type rec struct {
		EventName string `json:"eventName"`
		S3        struct {
			Bucket struct {
				Name string `json:"name"`
			} `json:"bucket"`
			Object struct {
				Key string `json:"key"`
			} `json:"object"`
		} `json:"s3"`
	}
	var n struct {
		Records []rec `json:"Records"`
	}
	for _, k := range keys {
		var r rec
		r.EventName, r.S3.Bucket.Name, r.S3.Object.Key = event, bucket, strings.ReplaceAll(k, "/", "%2F")
		n.Records = append(n.Records, r)
	}
	b, _ := json.Marshal(n)
	return string(b)
}

// TestAuthorization: only the token, alone or after "Bearer " (as MinIO
// sends a one-word auth_token), is let in; anything else is 401 before the
// body is read, and changes nothing.
func TestAuthorization(t *testing.T) {
	body := notification("lib", "s3:ObjectCreated:Put", "alice/skills/a/SKILL.md")
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong token", "wrong-token-0123456789", http.StatusUnauthorized},
		{"wrong bearer", "Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"token with a prefix", "x" + token, http.StatusUnauthorized},
		{"token cut short", token[:len(token)-1], http.StatusUnauthorized},
		{"lower-case scheme", "bearer " + token, http.StatusUnauthorized},
		{"basic", "Basic " + token, http.StatusUnauthorized},
		{"token", token, http.StatusOK},
		{"bearer token", "Bearer " + token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cat := newRecorder(t)
				r := newReceiver(t, config(t), cat, events.Options{})
				w := post(r, tc.auth, body)
				if w.Code != tc.want {
					t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
				}
				synctest.Wait() // the drop, if any, ran
				cat.mu.Lock()
				defer cat.mu.Unlock()
				if tc.want == http.StatusUnauthorized {
					if w.Header().Get("WWW-Authenticate") == "" {
						t.Error("401 without WWW-Authenticate")
					}
					if len(cat.invalidated) != 0 {
						t.Errorf("an unauthorized request invalidated %v", cat.invalidated)
					}
				} else if len(cat.invalidated) != 1 {
					t.Errorf("invalidated %v, want alice's library", cat.invalidated)
				}
			})
		})
	}
}

// TestTokenFile: a token too short to resist guessing, or a missing file,
// keeps the receiver from starting.
func TestTokenFile(t *testing.T) {
	cfg := config(t)
	cfg.WebhookTokenFile = tokenFile(t, "short")
	if _, err := events.New(cfg, newRecorder(t), events.Options{}); err == nil || !strings.Contains(err.Error(), "at least 16 bytes") {
		t.Errorf("a short token: %v", err)
	}
	cfg.WebhookTokenFile = filepath.Join(t.TempDir(), "missing")
	if _, err := events.New(cfg, newRecorder(t), events.Options{}); err == nil {
		t.Error("a missing token file was accepted")
	}
}

// TestRequestBounds: an authorized request still gets a clear 413 or 400
// for a body over the bound, too many records, or no notification at all.
func TestRequestBounds(t *testing.T) {
	cfg := config(t)
	cfg.MaxBodyBytes, cfg.MaxRecords = 1024, 2
	reg := prometheus.NewRegistry()
	r := newReceiver(t, cfg, newRecorder(t), events.Options{Registerer: reg})
	rejected := func(reason string) float64 {
		return counter(t, reg, "skillsvc_events_requests_rejected_total", "reason", reason)
	}
	for _, tc := range []struct {
		name, body, wantBody, reason string
		want                         int
	}{
		{"too large", `{"Records":[` + strings.Repeat(" ", 1100) + `]}`, "larger than 1024 bytes", "too_large", http.StatusRequestEntityTooLarge},
		{"too many records", notification("lib", "s3:ObjectCreated:Put", "a/skills/1", "a/skills/2", "a/skills/3"), "3 records: at most 2", "malformed", http.StatusBadRequest},
		{"not json", "hello", "not an S3 event notification", "malformed", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := rejected(tc.reason)
			w := post(r, token, tc.body)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.wantBody) {
				t.Fatalf("status %d %q, want %d with %q", w.Code, w.Body, tc.want, tc.wantBody)
			}
			if rejected(tc.reason) != before+1 {
				t.Errorf("rejected{reason=%q} not counted", tc.reason)
			}
		})
	}
}

// counter reads one series of a counter (or gauge) on reg: the one whose
// label has value, or with label "" the one without labels.
func counter(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			if label == "" {
				return v
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return v
				}
			}
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// TestApply: each library a request changes is invalidated once and, when a
// library, announced to the other replicas; everything else is ignored, and
// counted by reason.
func TestApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := newRecorder(t)
		topic := &fakeTopic{}
		reg := prometheus.NewRegistry()
		r := newReceiver(t, config(t), cat, events.Options{Bucket: "lib", Topic: topic, Registerer: reg})
		recs := []events.Record{
			{Event: "ObjectAccessed:Get", Bucket: "lib", Key: "alice/skills/a/SKILL.md"},
			{Event: "ObjectCreated:Put", Bucket: "other", Key: "alice/skills/a/SKILL.md"},
			{Event: "ObjectCreated:Put", Bucket: "lib", Key: "alice/threads/t1/notes.md"},
			{Event: "ObjectCreated:Put", Bucket: "lib", Key: "alice/settings/skills.index"},
			{Event: "ObjectCreated:Put", Bucket: "lib", Key: "alice/skills/a/SKILL.md"},
			{Event: "ObjectRemoved:Delete", Bucket: "lib", Key: "alice/skills/b/SKILL.md"},
			{Event: "ObjectCreated:Copy", Bucket: "lib", Key: "_shared/skills/c/SKILL.md"},
			{Event: "ObjectCreated:Put", Bucket: "lib", Key: "bob/settings/skills.json"},
			{Event: "LifecycleExpiration:Delete", Bucket: "lib", Key: "carol/skills/d/SKILL.md"},
		}
		applied, err := r.Apply(t.Context(), recs)
		if err != nil || applied != 4 {
			t.Fatalf("Apply = %d, %v; want 4 applied", applied, err)
		}
		synctest.Wait() // the drops ran; their rechecks wait a second
		alice, shared := layout.LibraryRef{User: "alice"}, layout.LibraryRef{Shared: true}
		want := []layout.Change{
			{Kind: layout.LibraryFile, Library: alice},
			{Kind: layout.LibraryFile, Library: shared},
			{Kind: layout.Settings, Library: layout.LibraryRef{User: "bob"}},
			{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "carol"}},
		}
		if got := cat.changes(); !equalChanges(got, want) {
			t.Errorf("invalidated %+v, want %+v", got, want)
		}
		var told []string
		for _, m := range topic.sent() {
			var msg struct {
				From   string
				User   string
				Shared bool
			}
			if err := json.Unmarshal(m, &msg); err != nil || msg.From == "" {
				t.Fatalf("published %s: %v", m, err)
			}
			told = append(told, msg.User+map[bool]string{true: "(shared)"}[msg.Shared])
		}
		slices.Sort(told)
		if strings.Join(told, ",") != "(shared),alice,carol" {
			t.Errorf("told the other replicas of %v, want alice, the shared library and carol (settings live in the shared cache)", told)
		}
		for reason, n := range map[string]float64{"event_type": 1, "other_bucket": 1, "unrelated": 1, "own_index": 1, "duplicate": 1} {
			if got := counter(t, reg, "skillsvc_events_ignored_total", "reason", reason); got != n {
				t.Errorf("ignored{reason=%q} = %v, want %v", reason, got, n)
			}
		}
		for change, n := range map[string]float64{"user_library": 2, "shared_library": 1, "settings": 1} {
			if got := counter(t, reg, "skillsvc_events_applied_total", "change", change); got != n {
				t.Errorf("applied{change=%q} = %v, want %v", change, got, n)
			}
		}
	})
}

// equalChanges compares in any order: drops run concurrently.
func equalChanges(a, b []layout.Change) bool {
	n := map[layout.Change]int{}
	for _, ch := range a {
		n[ch]++
	}
	for _, ch := range b {
		n[ch]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

// TestApplyRechecks: each change applied is dropped, and announced, once
// more a second after its last event; a burst of requests naming it again
// meanwhile joins that recheck instead of dropping it each time.
func TestApplyRechecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := newRecorder(t)
		topic := &fakeTopic{}
		reg := prometheus.NewRegistry()
		r := newReceiver(t, config(t), cat, events.Options{Topic: topic, Registerer: reg})
		recs := []events.Record{
			{Event: "ObjectCreated:Put", Key: "alice/skills/a/SKILL.md"},
			{Event: "ObjectCreated:Put", Key: "bob/settings/skills.json"},
		}
		if _, err := r.Apply(t.Context(), recs); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for range 10 { // the burst goes on
			if _, err := r.Apply(t.Context(), recs[:1]); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Minute)
		n := map[layout.Change]int{}
		for _, ch := range cat.changes() {
			n[ch]++
		}
		alice, bob := cat.ChangeOf(recs[0].Key), cat.ChangeOf(recs[1].Key)
		if n[alice] != 2 || n[bob] != 2 || len(n) != 2 {
			t.Errorf("invalidated %v, want alice's library and bob's settings twice each (the drop, the recheck)", n)
		}
		if n := len(topic.sent()); n != 2 {
			t.Errorf("announced %d times, want alice's library twice", n)
		}
		if got := counter(t, reg, "skillsvc_events_coalesced_total", "", ""); got != 10 {
			t.Errorf("coalesced = %v, want 10", got)
		}
	})
}

// TestFailedDropsRetried: the request is accepted whatever the drops it
// queues meet; when the shared cache or storage fails an invalidation, or
// the other replicas cannot be told, the drop is tried again a second later.
func TestFailedDropsRetried(t *testing.T) {
	body := notification("lib", "s3:ObjectCreated:Put", "alice/skills/a/SKILL.md")
	t.Run("invalidate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cat := newRecorder(t)
			cat.fail = errors.New("redis down")
			reg := prometheus.NewRegistry()
			r := newReceiver(t, config(t), cat, events.Options{Registerer: reg})
			if w := post(r, token, body); w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", w.Code)
			}
			synctest.Wait()
			cat.mu.Lock()
			cat.fail = nil
			cat.mu.Unlock()
			time.Sleep(time.Minute)
			if got := cat.changes(); len(got) != 1 || counter(t, reg, "skillsvc_events_drops_total", "result", "error") != 1 {
				t.Errorf("invalidated %v after one failure, want alice's library once", got)
			}
		})
	})
	t.Run("publish", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			topic := &fakeTopic{fail: errors.New("redis down")}
			reg := prometheus.NewRegistry()
			r := newReceiver(t, config(t), newRecorder(t), events.Options{Topic: topic, Registerer: reg})
			if w := post(r, token, body); w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", w.Code)
			}
			synctest.Wait()
			topic.mu.Lock()
			topic.fail = nil
			topic.mu.Unlock()
			time.Sleep(time.Minute)
			if n := len(topic.sent()); n != 1 || counter(t, reg, "skillsvc_events_peer_messages_total", "outcome", "publish_failed") != 1 {
				t.Errorf("published %d after one failure, want 1", n)
			}
		})
	})
}

// TestRefusalsAudited: every event request refused (no token, a body too
// large, a malformed one, and one naming a library past --events.max-pending)
// is an audit line naming the endpoint and the result; an overloaded
// sender is told when to come back, and what fitted is applied.
func TestRefusalsAudited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config(t)
		cfg.MaxBodyBytes, cfg.MaxPending = 4096, 2
		var lines bytes.Buffer
		cat := newRecorder(t)
		reg := prometheus.NewRegistry()
		r := newReceiver(t, cfg, cat, events.Options{Audit: audit.New(&lines), Registerer: reg})
		for _, tc := range []struct {
			name, auth, body, result string
			want                     int
		}{
			{"unauthorized", "Bearer wrong-token-0123456789", "{}", "Unauthenticated", http.StatusUnauthorized},
			{"too large", token, strings.Repeat(" ", 5000), "ResourceExhausted", http.StatusRequestEntityTooLarge},
			{"malformed", token, "hello", "InvalidArgument", http.StatusBadRequest},
			{"overloaded", token, notification("lib", "s3:ObjectCreated:Put", "a/skills/x/SKILL.md", "b/skills/x/SKILL.md", "c/skills/x/SKILL.md", "a/skills/y/SKILL.md"), "Unavailable", http.StatusServiceUnavailable},
		} {
			lines.Reset()
			w := post(r, tc.auth, tc.body)
			if w.Code != tc.want {
				t.Fatalf("%s: status %d, want %d: %s", tc.name, w.Code, tc.want, w.Body)
			}
			var line struct {
				RPC, Result, Error string
				Authenticated      *bool
				RequestID          string `json:"request_id"`
			}
			if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
				t.Fatalf("%s: audit line %q: %v", tc.name, lines.String(), err)
			}
			if line.RPC != "/events/s3" || line.Result != tc.result || line.RequestID == "" || line.Authenticated == nil || *line.Authenticated {
				t.Errorf("%s: audit line %s, want rpc /events/s3, result %s, unauthenticated, a request ID", tc.name, lines.String(), tc.result)
			}
		}
		// The overloaded request: a and b fitted, c did not.
		synctest.Wait()
		want := []layout.Change{
			{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "a"}},
			{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "b"}},
		}
		if got := cat.changes(); !equalChanges(got, want) {
			t.Errorf("invalidated %+v, want %+v", got, want)
		}
		if n := counter(t, reg, "skillsvc_events_requests_rejected_total", "reason", "overloaded"); n != 1 {
			t.Errorf("rejected{reason=overloaded} = %v", n)
		}
		w := post(r, token, notification("lib", "s3:ObjectCreated:Put", "c/skills/x/SKILL.md"))
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
			t.Errorf("while a and b wait for their recheck: %d, Retry-After %q; want 503 and 1", w.Code, w.Header().Get("Retry-After"))
		}
		time.Sleep(time.Minute)
		if w := post(r, token, notification("lib", "s3:ObjectCreated:Put", "c/skills/x/SKILL.md")); w.Code != http.StatusOK {
			t.Errorf("once the queue drained: %d, want 200", w.Code)
		}
	})
}

// TestFromPeers: another replica's message makes this one forget that
// library; its own messages, and messages naming no valid library, change
// nothing; each (re)subscription forgets every library held.
func TestFromPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := newRecorder(t)
		topic := &fakeTopic{}
		r := newReceiver(t, config(t), cat, events.Options{Topic: topic})
		if topic.onMessage == nil {
			t.Fatal("New did not subscribe")
		}
		// Its own message, learned from what it publishes.
		if _, err := r.Apply(t.Context(), []events.Record{{Event: "ObjectCreated:Put", Key: "alice/skills/a/SKILL.md"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		topic.onMessage(topic.sent()[0])
		for _, m := range []string{`{"from":"other","user":"bob"}`, `{"from":"other","shared":true}`, `{"from":"other","user":"no such user!"}`, `{"from":"other"}`, `not json`, `{"from":"other","user":"x` + strings.Repeat("x", 5000) + `"}`} {
			topic.onMessage([]byte(m))
		}
		want := []layout.Change{
			{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "bob"}},
			{Kind: layout.LibraryFile, Library: layout.LibraryRef{Shared: true}},
		}
		if !equalChanges(cat.forgot, want) {
			t.Errorf("forgot %+v, want %+v", cat.forgot, want)
		}
		topic.subscribed()
		topic.subscribed()
		if cat.forgotAll != 2 {
			t.Errorf("ForgetAll ran %d times for 2 subscriptions", cat.forgotAll)
		}
	})
}
