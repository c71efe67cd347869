package search

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

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
		for i, d := range c.docs {
			c.an[i] = Analyze(d)
		}
	})
	return c.an
}

var (
	corpusOnce   sync.Once
	loadedCorpus *corpus
)

// loadCorpus reads the archive at $SELECTION_CORPUS or
// test/selection/corpus.tar.zst; nil when there is none.
func loadCorpus(tb testing.TB) *corpus {
	tb.Helper()
	corpusOnce.Do(func() {
		p := os.Getenv("SELECTION_CORPUS")
		if p == "" {
			p = "../../test/selection/corpus.tar.zst"
		}
		f, err := os.Open(p)
		if err != nil {
			return
		}
		defer f.Close()
		c, err := readCorpus(f)
		if err != nil {
			tb.Fatalf("corpus %s: %v", p, err)
		}
		if dir := os.Getenv("SELECTION_DOC_TARGETS"); dir != "" {
			c.addTargetDir(tb, dir)
		}
		if err := c.readRequests(tb, "../../test/selection/queries.json"); err != nil {
			tb.Fatalf("requests: %v", err)
		}
		c.computeCopies()
		loadedCorpus = c
	})
	return loadedCorpus
}

type manifestEntry struct {
	Path   string   `json:"path"`
	Source string   `json:"source"`
	Files  []string `json:"files"`
}

func readCorpus(r io.Reader) (*corpus, error) {
	zr, err := zstd.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 16<<20))
		if err != nil {
			return nil, err
		}
		files[strings.TrimPrefix(h.Name, "./")] = b
	}
	var m struct {
		Skills  []manifestEntry `json:"skills"`
		Targets []manifestEntry `json:"targets"`
	}
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		return nil, err
	}
	c := &corpus{keys: map[string]int{}}
	add := func(p, source string, e manifestEntry) int {
		data, ok := files[p]
		if !ok {
			return -1
		}
		folder := path.Base(path.Dir(p))
		fm, body, _ := skillmd.ParseSkillMD(data, folder)
		c.docs = append(c.docs, docFor(fm, folder, body, e.Files))
		c.paths = append(c.paths, p)
		c.bodies = append(c.bodies, body)
		if k := source + "/" + folder; source != "" {
			if _, dup := c.keys[k]; !dup {
				c.keys[k] = len(c.docs) - 1
			}
		}
		return len(c.docs) - 1
	}
	for _, e := range m.Targets {
		add("targets/"+e.Path, "anthropic", e)
	}
	for _, e := range m.Skills {
		add("skills/"+e.Source+"/"+e.Path, e.Source, e)
	}
	return c, nil
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

// addTargetDir adds the targets whose text the archive cannot hold (the
// document skills under Anthropic's licence), from <dir>/<name>/SKILL.md.
func (c *corpus) addTargetDir(tb testing.TB, dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatalf("targets: %v", err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(path.Join(dir, e.Name(), "SKILL.md"))
		if err != nil {
			continue
		}
		var files []string
		sub, _ := os.ReadDir(path.Join(dir, e.Name()))
		for _, f := range sub {
			files = append(files, f.Name())
		}
		fm, body, _ := skillmd.ParseSkillMD(data, e.Name())
		c.docs = append(c.docs, docFor(fm, e.Name(), body, files))
		c.paths = append(c.paths, "targets/"+e.Name()+"/SKILL.md")
		c.bodies = append(c.bodies, body)
		c.keys["anthropic/"+e.Name()] = len(c.docs) - 1
	}
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
// whose target the corpus lacks (the document skills without
// SELECTION_DOC_TARGETS).
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

// corpusDocs are the corpus's skills, nil when absent.
func corpusDocs(tb testing.TB) []Doc {
	if c := loadCorpus(tb); c != nil {
		return c.docs
	}
	return nil
}
