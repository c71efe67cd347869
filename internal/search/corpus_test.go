package search

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	selcorpus "github.com/skillsvc/skillsvc/internal/selection/corpus"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// corpus is the real-skill corpus and task requests of test/selection
// (SOURCES.md): 10,000 public SKILL.md files beside the anthropics/skills
// targets.
type corpus struct {
	docs     []Doc
	paths    []string
	bodies   []string
	keys     map[string]int // "source/folder" (anthropic/pdf) → its document
	requests []request
	copies   map[int]map[int]bool // target → documents that count as it

	once sync.Once
	an   []Analyzed
}

func (c *corpus) isCopy(target, doc int) bool { return target == doc || c.copies[target][doc] }

// analyzed analyzes every document once per test binary.
func (c *corpus) analyzed() []Analyzed {
	c.once.Do(func() {
		c.an = make([]Analyzed, len(c.docs))
		var wg sync.WaitGroup
		n := runtime.GOMAXPROCS(0)
		for w := range n {
			wg.Go(func() {
				for i := w; i < len(c.docs); i += n {
					c.an[i] = Analyze(c.docs[i])
				}
			})
		}
		wg.Wait()
	})
	return c.an
}

var (
	corpusMu sync.Mutex
	corpora  = map[int]*corpus{}
)

// Corpus sizes: the benchmark's, and the subset make test reads (the
// list's first source, ecc-universal, 4.6 MB).
const (
	fullCorpus  = 10000
	smallCorpus = 700
)

// loadCorpus reads the 17 targets and the first n corpus skills of the
// registry packages pinned in test/selection/registry.json (package
// internal/selection/corpus; downloaded once into its cache), once per test
// binary and n. $SELECTION_SIZE overrides n for the tests that take the
// full corpus.
func loadCorpus(tb testing.TB, n int) *corpus {
	tb.Helper()
	if v, err := strconv.Atoi(os.Getenv("SELECTION_SIZE")); err == nil && v > 0 && n == fullCorpus {
		n = v
	}
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if c := corpora[n]; c != nil {
		return c
	}
	l, err := selcorpus.ReadList("../../test/selection/registry.json")
	if err != nil {
		tb.Fatal(err)
	}
	lib, err := selcorpus.Load(context.Background(), l, selcorpus.Options{Skills: n, Concurrency: 2})
	if err != nil {
		tb.Fatalf("corpus: %v", err)
	}
	c := &corpus{keys: map[string]int{}}
	add := func(key, folder, p string, text []byte, files []string) {
		fm, body, _ := skillmd.ParseSkillMD(text, folder)
		c.docs = append(c.docs, docFor(fm, folder, body, files))
		c.paths = append(c.paths, p)
		c.bodies = append(c.bodies, body)
		c.keys[key] = len(c.docs) - 1
	}
	for _, t := range lib.Targets {
		add("anthropic/"+t.Name, t.Name, "targets/"+t.Name+"/SKILL.md", t.Text, t.Files)
	}
	for _, s := range lib.Skills {
		add(s.Dir, s.Folder(), s.Source+"/"+s.Path, s.Text, s.Files)
	}
	if err := c.readRequests(tb, "../../test/selection/queries.json"); err != nil {
		tb.Fatalf("requests: %v", err)
	}
	c.computeCopies()
	corpora[n] = c
	return c
}

// docFor makes a Doc as the catalog does (internal/skills docOf): the
// frontmatter's lists and tags as labels.
func docFor(fm skillmd.Frontmatter, folder, body string, files []string) Doc {
	name := fm.Name
	if name == "" {
		name = folder
	}
	d := Doc{Name: name, DisplayName: fm.DisplayName, Description: fm.Description, Body: body}
	for _, f := range files {
		if f != "SKILL.md" {
			d.Files = append(d.Files, f)
		}
	}
	label := func(v any) {
		switch x := v.(type) {
		case string:
			d.Labels = append(d.Labels, x)
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					d.Labels = append(d.Labels, s)
				}
			}
		}
	}
	for k, v := range fm.Extra {
		if _, isList := v.([]any); isList || k == "tags" || k == "keywords" {
			label(v)
		}
	}
	if meta, ok := fm.Raw["metadata"].(map[string]any); ok {
		for _, v := range meta {
			if _, isList := v.([]any); isList {
				label(v)
			}
		}
	}
	for k, v := range fm.Metadata {
		if k == "tags" || k == "keywords" {
			d.Labels = append(d.Labels, v)
		}
	}
	slices.Sort(d.Labels)
	return d
}

// computeCopies finds each target's copies by the bench harness's rule:
// the same name with a body whose word 3-shingles are at least 90% the
// same (Jaccard), or the same normalized body under any name.
func (c *corpus) computeCopies() {
	c.copies = map[int]map[int]bool{}
	norm := func(s string) string {
		var ws []string
		words(s, false, func(w string) { ws = append(ws, strings.ToLower(w)) })
		return strings.Join(ws, " ")
	}
	shingles := func(s string) map[string]bool {
		ws := strings.Fields(norm(s))
		m := map[string]bool{}
		for i := 0; i+2 < len(ws); i++ {
			m[strings.Join(ws[i:i+3], " ")] = true
		}
		return m
	}
	normed := make([]string, len(c.docs))
	for d := range c.docs {
		normed[d] = norm(c.bodies[d])
	}
	targets := map[int]bool{}
	for _, r := range c.requests {
		targets[r.Target] = true
	}
	for t := range targets {
		tn, tb, ts := strings.ToLower(c.docs[t].Name), normed[t], shingles(c.bodies[t])
		c.copies[t] = map[int]bool{}
		for d := range c.docs {
			if d == t {
				continue
			}
			if tb != "" && normed[d] == tb {
				c.copies[t][d] = true
				continue
			}
			if strings.ToLower(c.docs[d].Name) != tn {
				continue
			}
			ds := shingles(c.bodies[d])
			n := 0
			for k := range ds {
				if ts[k] {
					n++
				}
			}
			if u := len(ts) + len(ds) - n; u > 0 && float64(n)/float64(u) >= 0.9 {
				c.copies[t][d] = true
			}
		}
	}
}

// readRequests reads the task requests, leaving out (and logging) those
// whose target the corpus lacks (outside a subset).
func (c *corpus) readRequests(tb testing.TB, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var qs []struct {
		Query, Target, Split string
	}
	if err := json.Unmarshal(data, &qs); err != nil {
		return err
	}
	missing := map[string]int{}
	for _, q := range qs {
		d, ok := c.keys[q.Target]
		if !ok {
			missing[q.Target]++
			continue
		}
		c.requests = append(c.requests, request{Query: q.Query, Target: d, Split: q.Split})
	}
	if len(missing) > 0 {
		tb.Logf("requests left out, their targets not in the corpus: %v", missing)
	}
	return nil
}

// TestCorpusIndexSize holds the index to its memory target, 4 KB per
// skill, on real skills: the first 700 of the registry corpus (the whole
// 10,000 run in make bench-selection, which reports the figure).
func TestCorpusIndexSize(t *testing.T) {
	c := loadCorpus(t, smallCorpus)
	b := NewBuilder(DefaultWeights)
	for _, a := range c.analyzed() {
		b.Add(a)
	}
	x := b.Build()
	per := x.Bytes() / int64(x.Len())
	t.Logf("%d skills, %d terms: %d bytes, %d per skill", x.Len(), x.numTerms(), x.Bytes(), per)
	if per > 4096 {
		t.Errorf("index holds %d bytes per skill, over 4096", per)
	}
	// Reuse on the real corpus: every other skill carried over from an
	// index of them all answers as one built fresh.
	r := NewBuilder(DefaultWeights)
	for i, a := range c.analyzed() {
		if i%2 == 0 {
			if !r.Reuse(x, i) {
				t.Fatalf("Reuse(%d) refused", i)
			}
		} else {
			r.Add(a)
		}
	}
	y := r.Build()
	xb, _ := x.MarshalBinary()
	yb, _ := y.MarshalBinary()
	if !bytes.Equal(xb, yb) {
		t.Errorf("index with reused skills differs from the fresh one")
	}
}
