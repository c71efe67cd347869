package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// server speaks the OpenAI embeddings format: each input's vector is
// [len(input), index in its request, 1].
type server struct {
	mu       sync.Mutex
	requests [][]string
	auth     []string
	// fail answers the first fail requests with status.
	fail   int
	status int
	// reply, when set, replaces the response body, sent with replyStatus
	// when that is set.
	reply       func(inputs []string) string
	replyStatus int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req.Input)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	fail := s.fail > 0
	if fail {
		s.fail--
	}
	s.mu.Unlock()
	if fail {
		w.WriteHeader(s.status)
		return
	}
	if s.reply != nil {
		if s.replyStatus != 0 {
			w.WriteHeader(s.replyStatus)
		}
		fmt.Fprint(w, s.reply(req.Input))
		return
	}
	var resp response
	resp.Data = make([]struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}, len(req.Input))
	// In reverse order: the client places vectors by their index.
	for i, in := range req.Input {
		d := &resp.Data[len(req.Input)-1-i]
		d.Index, d.Embedding = i, []float32{float32(len(in)), float32(i), 1}
	}
	json.NewEncoder(w).Encode(resp)
}

func newClient(t *testing.T, s *server, mod func(*Config)) *Client {
	t.Helper()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	cfg := Config{URL: hs.URL, Model: "m", Timeout: 5 * time.Second, Weight: DefaultWeight}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.backoff = time.Millisecond
	return c
}

func TestEmbedBatches(t *testing.T) {
	s := &server{}
	c := newClient(t, s, nil)
	inputs := make([]string, MaxBatch*2+3)
	for i := range inputs {
		inputs[i] = strings.Repeat("x", i+1)
	}
	vs, err := c.Embed(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if int(v[0]) != i+1 {
			t.Fatalf("vector %d is of an input of %v bytes", i, v[0])
		}
	}
	if len(s.requests) != 3 || len(s.requests[0]) != MaxBatch || len(s.requests[2]) != 3 {
		t.Errorf("requests of %d inputs; want %d, %d, 3", lens(s.requests), MaxBatch, MaxBatch)
	}
}

func TestEmbedBatchBytes(t *testing.T) {
	s := &server{}
	c := newClient(t, s, nil)
	big := strings.Repeat("y", MaxInputBytes)
	n := MaxBatchBytes/MaxInputBytes + 1
	inputs := make([]string, n)
	for i := range inputs {
		inputs[i] = big
	}
	if _, err := c.Embed(context.Background(), inputs); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.requests {
		size := 0
		for _, in := range r {
			size += len(in)
		}
		if size > MaxBatchBytes {
			t.Errorf("a request of %d bytes of input, over %d", size, MaxBatchBytes)
		}
	}
	if len(s.requests) != 2 {
		t.Errorf("%d requests; want 2", len(s.requests))
	}
	if _, err := c.Embed(context.Background(), []string{big + "z"}); !errors.Is(err, ErrInputTooLarge) || errkind.Of(err) != errkind.InvalidArgument {
		t.Errorf("input over MaxInputBytes: %v", err)
	}
}

func TestEmbedRetries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		fail       int
		wantErr    error
		wantKind   errkind.Kind
		wantTrials int
	}{
		{"429 then ok", http.StatusTooManyRequests, 2, nil, 0, 3},
		{"503 then ok", http.StatusServiceUnavailable, 1, nil, 0, 2},
		{"500 always", http.StatusInternalServerError, 10, ErrUnavailable, errkind.Unavailable, attempts},
		{"401 not retried", http.StatusUnauthorized, 10, ErrRejected, errkind.FailedPrecondition, 1},
		{"404 not retried", http.StatusNotFound, 10, ErrRejected, errkind.FailedPrecondition, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &server{fail: tc.fail, status: tc.status}
			c := newClient(t, s, nil)
			_, err := c.Embed(context.Background(), []string{"a"})
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && (!errors.Is(err, tc.wantErr) || errkind.Of(err) != tc.wantKind) {
				t.Errorf("err %v; want %v", err, tc.wantErr)
			}
			if len(s.requests) != tc.wantTrials {
				t.Errorf("%d requests; want %d", len(s.requests), tc.wantTrials)
			}
		})
	}
}

func TestEmbedDown(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	c, err := New(Config{URL: url, Model: "m", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.backoff = time.Millisecond
	if _, err := c.Embed(context.Background(), []string{"a"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("endpoint down: %v", err)
	}
}

func TestEmbedBadResponses(t *testing.T) {
	vec := func(dims int) string { return "[" + strings.TrimSuffix(strings.Repeat("0.5,", dims), ",") + "]" }
	for _, tc := range []struct {
		name  string
		reply func(inputs []string) string
	}{
		{"not json", func([]string) string { return "<html>" }},
		{"too few", func([]string) string { return `{"data":[]}` }},
		{"index out of range", func([]string) string { return `{"data":[{"index":5,"embedding":[1]}]}` }},
		{"index twice", func([]string) string {
			return `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`
		}},
		{"empty vector", func([]string) string { return `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}` }},
		{"dimensions differ", func([]string) string {
			return `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`
		}},
		{"too many dimensions", func([]string) string {
			return `{"data":[{"index":0,"embedding":` + vec(MaxDims+1) + `},{"index":1,"embedding":` + vec(MaxDims+1) + `}]}`
		}},
		{"not a number", func([]string) string {
			return `{"data":[{"index":0,"embedding":["x"]},{"index":1,"embedding":[1]}]}`
		}},
		{"too large", func([]string) string { return `{"data":[` + strings.Repeat(" ", maxResponseBytes) + `]}` }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, &server{reply: tc.reply}, nil)
			vs, err := c.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, ErrBadResponse) || vs != nil {
				t.Errorf("got %v, %v; want ErrBadResponse", vs, err)
			}
		})
	}
}

func TestEmbedAPIKeyFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(f, []byte("sekret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &server{}
	c := newClient(t, s, func(c *Config) { c.APIKeyFile = f })
	if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if s.auth[0] != "Bearer sekret" {
		t.Errorf("Authorization %q", s.auth[0])
	}
	if _, err := New(Config{URL: "http://x", Model: "m", Timeout: time.Second, APIKeyFile: f + ".missing"}); !errors.Is(err, ErrConfig) {
		t.Errorf("missing key file: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"off", Config{}, true},
		{"on", Config{URL: "http://e", Model: "m", Timeout: time.Second, Weight: 0.5}, true},
		{"no model", Config{URL: "http://e", Timeout: time.Second}, false},
		{"not http", Config{URL: "ftp://e", Model: "m", Timeout: time.Second}, false},
		{"weight", Config{URL: "http://e", Model: "m", Timeout: time.Second, Weight: 2}, false},
		{"timeout", Config{URL: "http://e", Model: "m"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func lens(rs [][]string) []int {
	var out []int
	for _, r := range rs {
		out = append(out, len(r))
	}
	return out
}

// FuzzDecode: whatever an endpoint answers, decode returns an error or
// exactly one finite vector per input, all of one length within MaxDims.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[0.5,1]},{"index":0,"embedding":[1,-2e-3]}]}`), 2)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`), 2)
	f.Add([]byte(`{"object":"list","data":null}`), 0)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > MaxBatch {
			return
		}
		vs, err := decode(data, n)
		if err != nil {
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("error %v is not ErrBadResponse", err)
			}
			return
		}
		if len(vs) != n {
			t.Fatalf("%d vectors for %d inputs", len(vs), n)
		}
		for _, v := range vs {
			if len(v) == 0 || len(v) > MaxDims || len(v) != len(vs[0]) {
				t.Fatalf("a vector of %d dimensions beside %d", len(v), len(vs[0]))
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("a number that is not finite: %v", x)
				}
			}
		}
	})
}

// TestEmbedRejectionKeepsNoRequestText: a refused request's error (which
// the search logs) tells the status, the body's length and an error's type
// and code when they are identifiers, never the body's words: endpoints
// echo their inputs, and a search's input is a user's private query.
func TestEmbedRejectionKeepsNoRequestText(t *testing.T) {
	const query = "merge Acme payroll into Globex ledger"
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"OpenAI error", `{"error":{"message":"Invalid input '` + query + `'","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			"status 400 (type invalid_request_error, code model_not_found, "},
		{"top-level, numeric code", `{"object":"error","message":"` + query + ` is too long","type":"BadRequestError","code":400}`,
			"status 400 (type BadRequestError, code 400, "},
		{"a code that is a word of the query", `{"error":{"message":"no","type":"payroll","code":"Globex"}}`, "status 400 ("},
		{"free text in type and code", `{"error":{"type":"` + query + `","code":"bad: ` + query + `"}}`, "status 400 ("},
		{"plain text echo", "cannot embed: " + query, "status 400 ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, &server{reply: func([]string) string { return tc.body }, replyStatus: http.StatusBadRequest}, nil)
			_, err := c.Embed(context.Background(), []string{query})
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("err %v, want ErrRejected", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, fmt.Sprintf("%d bytes of body)", len(tc.body))) {
				t.Errorf("error %q, want %q… and the body's length", msg, tc.want)
			}
			for word := range strings.FieldsSeq(query) {
				if len(word) > 4 && strings.Contains(strings.ToLower(msg), strings.ToLower(word)) {
					t.Errorf("error %q repeats %q of the request", msg, word)
				}
			}
		})
	}
}
