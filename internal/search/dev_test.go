package search

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func devDocs(tb testing.TB) []Doc {
	dir := os.Getenv("SEARCH_DEV_DIR")
	if dir == "" {
		tb.Skip("no dev dir")
	}
	var docs []Doc
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "SKILL.md" {
			return nil
		}
		b, _ := os.ReadFile(p)
		s := string(b)
		var fm map[string]any
		body := s
		if strings.HasPrefix(s, "---\n") {
			if i := strings.Index(s[4:], "\n---"); i >= 0 {
				yaml.Unmarshal([]byte(s[4:4+i]), &fm)
				body = s[4+i+4:]
			}
		}
		str := func(k string) string { v, _ := fm[k].(string); return v }
		var files []string
		filepath.WalkDir(filepath.Dir(p), func(q string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				r, _ := filepath.Rel(filepath.Dir(p), q)
				files = append(files, r)
			}
			return nil
		})
		docs = append(docs, Doc{Name: str("name"), Description: str("description"), Body: body, Files: files})
		return nil
	})
	return docs
}

func TestDevStats(t *testing.T) {
	docs := devDocs(t)
	var sizes []int
	for _, d := range docs {
		sizes = append(sizes, len(d.Body))
	}
	slices.Sort(sizes)
	t.Logf("%d docs; body bytes p25 %d p50 %d p75 %d p90 %d p99 %d", len(docs), sizes[len(sizes)/4], sizes[len(sizes)/2], sizes[len(sizes)*3/4], sizes[len(sizes)*9/10], sizes[len(sizes)*99/100])
	start := time.Now()
	b := NewBuilder(DefaultWeights)
	var es int
	var tot [numFields]float64
	for _, d := range docs {
		a := Analyze(d)
		if a.lang == langES {
			es++
		}
		for f := range tot {
			tot[f] += float64(a.length[f])
		}
		b.Add(a)
	}
	el := time.Since(start)
	x := b.Build()
	for f := range tot {
		tot[f] /= float64(len(docs))
	}
	t.Logf("analyze+build %v (%v/doc); es %d; bytes/skill %d; terms %d; mean lengths %v", el, el/time.Duration(len(docs)), es, x.Bytes()/int64(x.Len()), x.numTerms(), tot)
}

func shingles(body string) map[uint64]bool {
	var ws []string
	words(body, false, func(w string) { ws = append(ws, strings.ToLower(w)) })
	m := map[uint64]bool{}
	for i := 0; i+2 < len(ws); i++ {
		m[fnvString(fnvOffset, ws[i]+" "+ws[i+1]+" "+ws[i+2])] = true
	}
	return m
}

func jaccard(a, b map[uint64]bool) float64 {
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	u := len(a) + len(b) - n
	if u == 0 {
		return 1
	}
	return float64(n) / float64(u)
}

func bitsDiff(a, b uint64) int {
	n := 0
	for x := a ^ b; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestDevMinHash(t *testing.T) {
	docs := devDocs(t)
	byName := map[string][]int{}
	for i, d := range docs {
		byName[strings.ToLower(d.Name)] = append(byName[strings.ToLower(d.Name)], i)
	}
	sh := make([]map[uint64]bool, len(docs))
	mh := make([][]uint16, len(docs))
	_ = minhashBins
	for i, d := range docs {
		sh[i] = shingles(d.Body)
		fp := fingerprintOf(d.Name, d.Description, d.Body)
		mh[i] = fp.minhash[:]
	}
	conf := map[[2]int]int{}
	for _, ids := range byName {
		for x := 0; x < len(ids); x++ {
			for y := x + 1; y < len(ids); y++ {
				i, j := ids[x], ids[y]
				jj := 0
				if jaccard(sh[i], sh[j]) >= 0.9 {
					jj = 1
				}
				n := 0
				for k := range mh[i] {
					if mh[i][k] == mh[j][k] {
						n++
					}
				}
				conf[[2]int{jj, max(n-48, 0)}]++
			}
		}
	}
	for jj := range 2 {
		var row []int
		for h := range 17 {
			row = append(row, conf[[2]int{jj, h}])
		}
		t.Logf("jaccard>=0.9=%d by matches/4 0..16: %v", jj, row)
	}
}

func TestDevCorpus(t *testing.T) {
	c := loadCorpus(t)
	if c == nil {
		t.Skip()
	}
	start := time.Now()
	an := c.analyzed()
	el := time.Since(start)
	b := NewBuilder(DefaultWeights)
	var es int
	var tot, cnt [numFields]float64
	for _, a := range an {
		if a.lang == langES {
			es++
		}
		for f := range tot {
			tot[f] += float64(a.length[f])
			if a.length[f] > 0 {
				cnt[f]++
			}
		}
		b.Add(a)
	}
	x := b.Build()
	for f := range tot {
		tot[f] /= max(cnt[f], 1)
	}
	t.Logf("present in %v", cnt)
	for i, cp := range c.copies {
		t.Logf("target %s: %d copies", c.paths[i], len(cp))
	}
	t.Logf("%d docs, %d targets; analyze %v; es %d; bytes/skill %d; terms %d; mean lengths %.1f", len(c.docs), len(c.requests), el, es, x.Bytes()/int64(x.Len()), x.numTerms(), tot)
}

func TestDevEval(t *testing.T) {
	c := loadCorpus(t)
	if c == nil {
		t.Skip()
	}
	an := c.analyzed()
	var tune, ho []request
	for _, r := range c.requests {
		if r.Split == "holdout" {
			ho = append(ho, r)
		} else {
			tune = append(tune, r)
		}
	}
	b := NewBuilder(DefaultWeights)
	for _, a := range an {
		b.Add(a)
	}
	x := b.Build()
	t.Logf("full index: tune %v", evaluate(x, tune, c.isCopy))
	t.Logf("full index: holdout %v", evaluate(x, ho, c.isCopy))
	t.Logf("tune index: tune %v", evaluate(tuneIndex(DefaultWeights, an, tune), tune, c.isCopy))
	s := evaluate(x, tune, c.isCopy)
	for _, q := range s.Missed {
		t.Logf("miss: %s", q)
	}
}

func TestDevWhy(t *testing.T) {
	c := loadCorpus(t)
	if c == nil {
		t.Skip()
	}
	an := c.analyzed()
	b := NewBuilder(DefaultWeights)
	for _, a := range an {
		b.Add(a)
	}
	x := b.Build()
	want := os.Getenv("Q")
	for _, r := range c.requests {
		if want != "" && !strings.Contains(r.Query, want) {
			continue
		}
		hs := Search([]Layer{{X: x}}, Query{Text: r.Query, Limit: 5, Collapse: true})
		t.Logf("Q %s  (target %s)", r.Query, c.paths[r.Target])
		for _, h := range hs {
			mark := " "
			if c.isCopy(r.Target, h.Doc) {
				mark = "*"
			}
			t.Logf("  %s %.3f %s | %.80s", mark, h.Relevance, c.paths[h.Doc], c.docs[h.Doc].Description)
		}
	}
}

func TestDevBodyCap(t *testing.T) {
	c := loadCorpus(t)
	if c == nil {
		t.Skip()
	}
	w := DefaultWeights
	defer func(v int) { bodyCap = v }(bodyCap)
	for _, cap := range []int{64 << 10} {
		bodyCap = cap
		an := make([]Analyzed, len(c.docs))
		var blen float64
		for i, d := range c.docs {
			an[i] = Analyze(d)
			blen += float64(an[i].length[FieldBody])
		}
		b := NewBuilder(w)
		for _, a := range an {
			b.Add(a)
		}
		x := b.Build()
		var tune []request
		for _, r := range c.requests {
			if r.Split != "holdout" {
				tune = append(tune, r)
			}
		}
		t.Logf("cap %2d KiB: mean body terms %.0f, bytes/skill %d, tune %v", cap>>10, blen/float64(len(an)), x.Bytes()/int64(x.Len()), evaluate(x, tune, c.isCopy))
	}
}

func TestDevIDF(t *testing.T) {
	c := loadCorpus(t)
	if c == nil {
		t.Skip()
	}
	an := c.analyzed()
	b := NewBuilder(DefaultWeights)
	for _, a := range an {
		b.Add(a)
	}
	x := b.Build()
	var tune, ho []request
	for _, r := range c.requests {
		if r.Split == "holdout" {
			ho = append(ho, r)
		} else {
			tune = append(tune, r)
		}
	}
	defer func(v float64) { DefaultWeights.IDFPower = v }(DefaultWeights.IDFPower)
	for _, p := range []float64{0, 0.25, 0.5, 0.75, 1, 1.5} {
		DefaultWeights.IDFPower = p
		t.Logf("idf^%.2f: tune %v | holdout %v", p, evaluate(x, tune, c.isCopy), evaluate(x, ho, c.isCopy))
	}
}
