package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/embed"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// conceptEmbedder embeds by concept: presentations, boats, the rest.
type conceptEmbedder struct {
	mu     sync.Mutex
	calls  [][]string
	failed error
}

func (e *conceptEmbedder) Model() string { return "concepts" }

func (e *conceptEmbedder) Embed(_ context.Context, in []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, in)
	if e.failed != nil {
		return nil, e.failed
	}
	out := make([][]float32, len(in))
	for i, s := range in {
		switch s = strings.ToLower(s); {
		case strings.Contains(s, "presentation"), strings.Contains(s, "board meeting"):
			out[i] = []float32{1, 0, 0}
		case strings.Contains(s, "boat"):
			out[i] = []float32{0, 1, 0}
		default:
			out[i] = []float32{0, 0, 1}
		}
	}
	return out, nil
}

func (e *conceptEmbedder) inputs() (n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.calls {
		n += len(c)
	}
	return n
}

func deckLibrary() *skillstest.Builder {
	lb := skillstest.New()
	lb.Shared().
		Skill("deck-cleaner", "", "Clean the deck of a boat, deck washing and deck care.", "# Deck\n\nScrub the deck.\n").
		Skill("slides", "", "Build presentations from an outline.", "# Outline\n\nOne idea per slide.\n").
		Skill("ledger", "", "Reconcile the ledger.", "# Steps\n\nMatch entries.\n")
	return lb
}

// TestSearchHybrid: with an embeddings endpoint, a search ranks by meaning
// too once the library's vectors are made (in the background, the search
// lexical meanwhile), each skill embedded once and a repeated task once.
func TestSearchHybrid(t *testing.T) {
	e := &conceptEmbedder{}
	reg := prometheus.NewRegistry()
	lib := skillstest.Library(t, deckLibrary().Bucket(t), skillstest.Indexed(time.Hour), skills.WithEmbeddings(e, 0.5), skills.WithRegisterer(reg))
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	search := func() string {
		t.Helper()
		res, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "a deck for the board meeting"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			t.Fatal("no hits")
		}
		return res.Hits[0].Skill.Name
	}
	if got := search(); got != "deck-cleaner" {
		t.Errorf("before the vectors: %q first, want the lexical deck-cleaner", got)
	}
	skills.WaitEmbeddings(lib.Catalog)
	// The same library without the stage holds the lexical index alone.
	lexReg := prometheus.NewRegistry()
	lexLib := skillstest.Library(t, deckLibrary().Bucket(t), skillstest.Indexed(time.Hour), skills.WithRegisterer(lexReg))
	if _, err := lexLib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "deck"}); err != nil {
		t.Fatal(err)
	}
	lexical, held := gauge(t, lexReg, "skillsvc_search_index_bytes"), gauge(t, reg, "skillsvc_search_index_bytes")
	if held < lexical+3*(4+3) {
		t.Errorf("index bytes %v with vectors, %v without: the vectors are not counted", held, lexical)
	}
	if n := gauge(t, reg, "skillsvc_search_vector_docs"); n != 3 {
		t.Errorf("skillsvc_search_vector_docs %v, want the 3 skills", n)
	}
	if got := search(); got != "slides" {
		t.Errorf("hybrid: %q first, want slides", got)
	}
	embedded := e.inputs()
	if embedded != 3+1 { // the skills, then the task
		t.Errorf("%d texts embedded, want the 3 skills and the task", embedded)
	}
	search()
	if e.inputs() != embedded {
		t.Errorf("a repeated task embedded again")
	}
}

// TestSearchHybridEndpointDown: a failing endpoint leaves search lexical
// and never fails a call.
func TestSearchHybridEndpointDown(t *testing.T) {
	e := &conceptEmbedder{failed: errors.New("connection refused")}
	lib := skillstest.Library(t, deckLibrary().Bucket(t), skillstest.Indexed(time.Hour), skills.WithEmbeddings(e, 0.5))
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	for range 2 {
		res, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "a deck for the board meeting"})
		if err != nil {
			t.Fatalf("search with the endpoint down: %v", err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Skill.Name != "deck-cleaner" {
			t.Fatalf("hits %+v, want the lexical ranking", res.Hits)
		}
		skills.WaitEmbeddings(lib.Catalog)
	}
	if len(e.calls) != 1 {
		t.Errorf("%d requests to a failed endpoint, want 1 until its retry period ends", len(e.calls))
	}
}

// gauge is the value of the registry's gauge name.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// TestSearchHybridSharedVectors: a replica over a library another replica
// embedded takes the skills' vectors from the shared cache and embeds only
// the task.
func TestSearchHybridSharedVectors(t *testing.T) {
	shared := cache.NewLRU(4 << 20)
	bucket := deckLibrary().Bucket(t)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	var embedders []*conceptEmbedder
	for range 2 {
		e := &conceptEmbedder{}
		embedders = append(embedders, e)
		lib := skillstest.Library(t, bucket, skillstest.Indexed(time.Hour), skills.WithEmbeddings(e, 0.5), skills.WithCache(shared))
		if _, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "a deck for the board meeting"}); err != nil {
			t.Fatal(err)
		}
		skills.WaitEmbeddings(lib.Catalog)
		res, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "a deck for the board meeting"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Hits[0].Skill.Name != "slides" {
			t.Errorf("%q first, want slides", res.Hits[0].Skill.Name)
		}
	}
	if n := embedders[1].inputs(); n != 1 {
		t.Errorf("the second replica embedded %d texts, want the task alone", n)
	}
}

// TestSearchHybridRejectionLogsNoQuery: an embeddings endpoint that refuses
// a search's task and echoes it in its error body (as many do) leaves the
// search lexical and a warning naming the status, never the query: queries
// are private (docs/operators/security.md, "Search queries"). Before, the
// warning kept the start of the error body.
func TestSearchHybridRejectionLogsNoQuery(t *testing.T) {
	const query = "quarterly board meeting about the Globex acquisition"
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, in := range req.Input {
			if strings.Contains(in, "Globex") {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is exceeded by '%s'","type":"invalid_request_error","code":"context_length_exceeded"}}`, in)
				return
			}
		}
		data := make([]map[string]any, len(req.Input))
		for i := range req.Input {
			data[i] = map[string]any{"index": i, "embedding": []float32{1, 0, 0}}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(endpoint.Close)
	e, err := embed.New(embed.Config{URL: endpoint.URL, Model: "m", Timeout: 5 * time.Second, Weight: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	cfg := skills.DefaultConfig()
	cfg.IndexRefresh, cfg.IndexMaxStale, cfg.StaleIfError = time.Hour, time.Hour, time.Hour
	lib, err := skills.New(deckLibrary().Bucket(t), mounts.Default(), cfg, slog.New(slog.NewJSONHandler(logs, nil)), skills.WithEmbeddings(e, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	// The first search has the library's vectors made (accepted); the
	// second's task is refused.
	for _, q := range []string{"deck care", query} {
		if _, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: q}); err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		skills.WaitEmbeddings(lib.Catalog)
	}
	log := logs.String()
	if !strings.Contains(log, "embeddings endpoint failed") || !strings.Contains(log, "status 400 (type invalid_request_error, code context_length_exceeded") {
		t.Errorf("no warning with the status and the error's type and code:\n%s", log)
	}
	for _, word := range []string{"Globex", "quarterly", "acquisition", "maximum context"} {
		if strings.Contains(log, word) {
			t.Errorf("the log repeats %q of the query or the endpoint's text:\n%s", word, log)
		}
	}
}
