package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/events"
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
	invalidated []skills.Change
	forgot      []skills.Change
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

func (r *recorder) ChangeOf(key string) skills.Change { return r.mapper.ChangeOf(key) }

func (r *recorder) Invalidate(_ context.Context, ch skills.Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.invalidated = append(r.invalidated, ch)
	return nil
}

func (r *recorder) Forget(ch skills.Change) error {
	if err := ch.Library.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgot = append(r.forgot, ch)
	return nil
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
	cat := newRecorder(t)
	r := newReceiver(t, config(t), cat, events.Options{})
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
			cat.mu.Lock()
			cat.invalidated = nil
			cat.mu.Unlock()
			w := post(r, tc.auth, body)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
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

// counter reads one series of a counter on reg: the one whose label has
// value, or with label "" the counter without labels.
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
			if label == "" {
				return m.GetCounter().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
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
	alice, shared := skills.LibraryRef{User: "alice"}, skills.LibraryRef{Shared: true}
	want := []skills.Change{
		{Kind: skills.LibraryFile, Library: alice},
		{Kind: skills.LibraryFile, Library: shared},
		{Kind: skills.Settings, Library: skills.LibraryRef{User: "bob"}},
		{Kind: skills.LibraryFile, Library: skills.LibraryRef{User: "carol"}},
	}
	if !equalChanges(cat.invalidated, want) {
		t.Errorf("invalidated %+v, want %+v", cat.invalidated, want)
	}
	var told []string
	for _, m := range topic.published {
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
	if strings.Join(told, ",") != "alice,(shared),carol" {
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
}

func equalChanges(a, b []skills.Change) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFailuresAre503: when the shared cache or storage fails an
// invalidation, or the other replicas cannot be told, the request is 503 so
// a sender with a queue retries.
func TestFailuresAre503(t *testing.T) {
	body := notification("lib", "s3:ObjectCreated:Put", "alice/skills/a/SKILL.md")
	t.Run("invalidate", func(t *testing.T) {
		cat := newRecorder(t)
		cat.fail = errors.New("redis down")
		r := newReceiver(t, config(t), cat, events.Options{})
		if w := post(r, token, body); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
	})
	t.Run("publish", func(t *testing.T) {
		r := newReceiver(t, config(t), newRecorder(t), events.Options{Topic: &fakeTopic{fail: errors.New("redis down")}})
		if w := post(r, token, body); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
	})
}

// TestFromPeers: another replica's message makes this one forget that
// library; its own messages, and messages naming no valid library, change
// nothing; each (re)subscription forgets every library held.
func TestFromPeers(t *testing.T) {
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
	topic.onMessage(topic.published[0])
	for _, m := range []string{`{"from":"other","user":"bob"}`, `{"from":"other","shared":true}`, `{"from":"other","user":"no such user!"}`, `{"from":"other"}`, `not json`, `{"from":"other","user":"x` + strings.Repeat("x", 5000) + `"}`} {
		topic.onMessage([]byte(m))
	}
	want := []skills.Change{
		{Kind: skills.LibraryFile, Library: skills.LibraryRef{User: "bob"}},
		{Kind: skills.LibraryFile, Library: skills.LibraryRef{Shared: true}},
	}
	if !equalChanges(cat.forgot, want) {
		t.Errorf("forgot %+v, want %+v", cat.forgot, want)
	}
	topic.subscribed()
	topic.subscribed()
	if cat.forgotAll != 2 {
		t.Errorf("ForgetAll ran %d times for 2 subscriptions", cat.forgotAll)
	}
}
