package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// fakeMCP answers as skillsvc's /mcp does: initialize with a session and
// the skills extension (as an event stream), and refuses the first
// `refuse` messages of each other method as the per-user limits do:
// requests with JSON-RPC -32000 and data.retryAfterMs, notifications with
// HTTP 429.
func fakeMCP(t *testing.T, refuse int) *httptest.Server {
	refused := map[string]int{}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &msg); err != nil || r.Header.Get("X-Skillsvc-User") != "alice" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if msg.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != "s1" {
			http.Error(w, "no session", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if msg.Method != "initialize" && refused[msg.Method] < refuse {
			refused[msg.Method]++
			code := http.StatusOK
			id := string(msg.ID)
			if id == "" {
				code, id = http.StatusTooManyRequests, "null"
			}
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"RESOURCE_EXHAUSTED: rate","data":{"retryAfterMs":1}}}`, id)
			return
		}
		switch msg.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"extensions\":{%q:{}}}}}\n\n", msg.ID, skillsExtension)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "skills/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"skills":[]}}`, msg.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no such skill"}}`, msg.ID)
		}
	}))
}

// A refused request or notification is counted as a refusal, retried after
// the delay given, and then succeeds; the session and protocol from
// initialize go on every later request.
func TestHostRetriesRefusals(t *testing.T) {
	srv := fakeMCP(t, 2)
	defer srv.Close()
	h := newHost(srv.URL, "alice", "t1", "2025-11-25", 1000, 1)
	ph := &phase{}
	if err := h.initialize(t.Context(), ph); err != nil {
		t.Fatalf("initialize: %v (%v)", err, ph.messages)
	}
	var res struct{ Skills []listedSkill }
	if err := h.call(t.Context(), ph, "skills/list", map[string]any{}, &res); err != nil {
		t.Fatalf("skills/list: %v (%v)", err, ph.messages)
	}
	if h.session != "s1" || h.protocol != "2025-11-25" {
		t.Errorf("session %q, protocol %q; want s1, 2025-11-25", h.session, h.protocol)
	}
	// Two refusals of notifications/initialized and two of skills/list.
	if ph.refusals != 4 || ph.failures != 0 || len(ph.latencies) != 3 {
		t.Errorf("refusals %d, failures %d, timed %d; want 4, 0, 3", ph.refusals, ph.failures, len(ph.latencies))
	}
}

// A request refused every time gives up after maxAttempts, counted as one
// failure; another error is a failure at once, not retried.
func TestHostFailures(t *testing.T) {
	tests := []struct {
		name                  string
		refuse                int
		method                string
		wantRefusals, wantErr int
	}{
		{name: "always refused", refuse: maxAttempts, method: "skills/list", wantRefusals: maxAttempts, wantErr: 1},
		{name: "invalid params", refuse: 0, method: "skills/get", wantRefusals: 0, wantErr: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeMCP(t, tt.refuse)
			defer srv.Close()
			h := newHost(srv.URL, "alice", "t1", "2025-11-25", 1e6, 1)
			h.session, h.protocol = "s1", "2025-11-25"
			ph := &phase{}
			err := h.call(t.Context(), ph, tt.method, map[string]any{"uri": "skill://x/SKILL.md"}, &struct{}{})
			if !errors.As(err, new(errCounted)) || ph.refusals != tt.wantRefusals || ph.failures != tt.wantErr || len(ph.latencies) != 0 {
				t.Errorf("err %v, refusals %d, failures %d, timed %d; want errCounted, %d, %d, 0 (%v)",
					err, ph.refusals, ph.failures, len(ph.latencies), tt.wantRefusals, tt.wantErr, ph.messages)
			}
		})
	}
}

// The delay comes from data.retryAfterMs when the server sends it, even 0
// (a wait under a millisecond, which Retry-After rounds up to a second).
func TestRefusalOf(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		retryAfter string
		want       time.Duration
	}{
		{"retryAfterMs", `{"retryAfterMs":250}`, "1", 250 * time.Millisecond},
		{"retryAfterMs 0", `{"retryAfterMs":0}`, "1", 0},
		{"Retry-After only", ``, "2", 2 * time.Second},
		{"neither", `{}`, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.retryAfter != "" {
				h.Set("Retry-After", tt.retryAfter)
			}
			if got := refusalOf(json.RawMessage(tt.data), h).retryAfter; got != tt.want {
				t.Errorf("retry after %v, want %v", got, tt.want)
			}
		})
	}
}
