package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// archiveSkill is one SKILL.md of a test archive.
type archiveSkill struct {
	source, path, text string
	files              []string
}

// libraryOf stands in for the registry download: targets and skills as
// loadLibrary lays them out.
func libraryOf(targets, skills []archiveSkill) func(context.Context, options) ([]skill, []skill, string, error) {
	return func(context.Context, options) (ts, ss []skill, note string, err error) {
		for _, s := range targets {
			ts = append(ts, skill{Dir: targetCategory + "/" + path.Dir(s.path), Text: []byte(s.text), Files: s.files, Target: true})
		}
		for _, s := range skills {
			ss = append(ss, skill{Dir: s.source + "/" + path.Base(path.Dir(s.path)), Text: []byte(s.text), Files: s.files})
		}
		return ts, ss, "", nil
	}
}

func skillText(name, description, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n\n# %s\n\n%s\n", name, description, name, body)
}

// fillerTopics make the filler skills of the test library distinct from
// each other and from the requests.
var fillerTopics = []string{"gardening", "astronomy", "knitting", "sailing", "pottery", "chess", "beekeeping", "origami", "cycling", "baking"}

// smallLibrary is a library of 200 skills: two targets, a copy of one of
// them under another category (same name, same body), a skill with a
// target's name and a body of its own (no copy), and filler.
func smallLibrary() (targets, skills []archiveSkill) {
	invoice := skillText("invoice-totals", "Extract the totals, taxes and due dates from supplier invoices.",
		"Read each invoice, find the amount due, the tax lines and the payment deadline, and return them as a table.")
	targets = []archiveSkill{
		{path: "invoice-totals/SKILL.md", text: invoice, files: []string{"scripts/extract.py", "LICENSE.txt"}},
		{path: "meeting-minutes/SKILL.md", text: skillText("meeting-minutes", "Turn a meeting transcript into minutes with decisions and owners.",
			"List the attendees, the decisions taken, each action item with its owner and deadline.")},
	}
	skills = []archiveSkill{
		{source: "mirror", path: "skills/invoice-totals/SKILL.md", text: invoice},
		{source: "other", path: "invoice-totals/SKILL.md", text: skillText("invoice-totals", "Design invoice templates for print.",
			"Pick fonts and margins for a printed invoice layout; nothing about extraction.")},
	}
	for i := len(targets) + len(skills); i < 200; i++ {
		topic := fillerTopics[i%len(fillerTopics)]
		name := fmt.Sprintf("%s-guide-%d", topic, i)
		skills = append(skills, archiveSkill{source: "filler", path: name + "/SKILL.md",
			text: skillText(name, fmt.Sprintf("Advice on %s, part %d.", topic, i), fmt.Sprintf("Everything about %s, chapter %d of the %s handbook.", topic, i, topic))})
	}
	return targets, skills
}

// The harness end to end on a 200-skill library through the binary: the
// library is laid out and served whole, each request's first result counts
// when it is the target or its copy, a request for nothing in the library
// misses, and the table and the JSON hold every figure.
func TestSmallRun(t *testing.T) {
	testserver.Integration(t, "the skillsvc binary")
	dir := t.TempDir()
	targets, skills := smallLibrary()
	qs := []query{
		{ID: "q1", Query: "pull the amount due and tax out of these supplier invoices", Target: "anthropic/invoice-totals", Split: "tune", Lang: "en"},
		{ID: "q2", Query: "write up the decisions and action owners from this transcript", Target: "anthropic/meeting-minutes", Split: "holdout", Lang: "en"},
		{ID: "q3", Query: "quantum chromodynamics lattice simulation", Target: "anthropic/meeting-minutes", Split: "holdout", Lang: "en"},
		{ID: "q4", Query: "advice on beekeeping chapter 16", Target: "filler/beekeeping-guide-16", Split: "tune", Lang: "en"},
	}
	queries := filepath.Join(dir, "queries.json")
	data, _ := json.Marshal(qs)
	if err := os.WriteFile(queries, data, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseOptions([]string{"-queries", queries, "-json", filepath.Join(dir, "out.json")})
	if err != nil {
		t.Fatal(err)
	}
	o.load = libraryOf(targets, skills)
	r, out := runReport(t, o, filepath.Join(dir, "out.json"))
	if len(r.Libraries) != 2 {
		t.Fatalf("%d libraries, want the targets alone and beside the corpus", len(r.Libraries))
	}
	alone, beside := r.Libraries[0], r.Libraries[1]
	if alone.Skills != 2 || beside.Skills != 200 {
		t.Errorf("served %d and %d skills, want 2 and 200", alone.Skills, beside.Skills)
	}
	if len(alone.Outcomes) != 3 || len(beside.Outcomes) != 4 {
		t.Fatalf("%d and %d outcomes, want 3 (the targets' requests) and 4", len(alone.Outcomes), len(beside.Outcomes))
	}
	byID := map[string]outcome{}
	for _, o := range beside.Outcomes {
		byID[o.ID] = o
	}
	if o := byID["q1"]; o.Rank != 1 || (o.Top[0] != "anthropic/invoice-totals" && o.Top[0] != "mirror/invoice-totals") {
		t.Errorf("q1: rank %d, top %v: want the target or its copy first", o.Rank, o.Top)
	}
	if o := byID["q3"]; o.Rank != 0 {
		t.Errorf("q3 matches nothing, yet ranked %d: %v", o.Rank, o.Top)
	}
	if o := byID["q4"]; o.Rank == 0 {
		t.Errorf("q4: a corpus skill as target was not found: %v", o.Top)
	}
	if beside.SearchP99MS <= 0 || beside.FormatP99MS <= 0 {
		t.Errorf("latencies not measured: %+v", beside)
	}
	for _, s := range []string{"Hit@1", "Recall@10", "MRR@10", "in block", "SearchSkills p50 / p99", "the 2 targets alone", "the 2 beside 198", "holdout", "Machine: "} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}

// Copies are decided from the texts: the same name with a near-identical
// body, or the same body under another name; a skill that only shares the
// name is not one.
func TestCopiesOf(t *testing.T) {
	var words []string
	for i := range 100 {
		words = append(words, fmt.Sprintf("step%d", i))
	}
	body := strings.Join(words, " ")
	text := func(name, description, body string) []byte {
		return []byte(fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n\n%s\n", name, description, body))
	}
	lib := []skill{
		{Dir: "anthropic/pdf", Text: text("pdf", "PDF work.", body)},
		{Dir: "fork/pdf", Text: text("pdf", "PDF tasks, forked.", body+" one more")},
		{Dir: "renamed/pdf-tools", Text: text("pdf-tools", "Other words.", body)},
		{Dir: "other/pdf", Text: text("pdf", "PDF forms.", "fill the fields of a form and flatten it")},
	}
	got := copiesOf(lib, []string{"anthropic/pdf"})["anthropic/pdf"]
	for dir, want := range map[string]bool{"anthropic/pdf": true, "fork/pdf": true, "renamed/pdf-tools": true, "other/pdf": false} {
		if got[dir] != want {
			t.Errorf("%s counted as the target: %v, want %v", dir, got[dir], want)
		}
	}
}

// The committed requests: at least 150, unique, every target with requests
// in both splits, the 17 targets each with several.
func TestQueriesFile(t *testing.T) {
	qs, err := loadQueries("../../test/selection/queries.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 150 {
		t.Errorf("%d requests, want at least 150", len(qs))
	}
	splits := map[string]map[string]int{}
	for _, q := range qs {
		if splits[q.Target] == nil {
			splits[q.Target] = map[string]int{}
		}
		splits[q.Target][q.Split]++
	}
	targets := 0
	for target, n := range splits {
		if n["tune"] == 0 || n["holdout"] == 0 {
			t.Errorf("%s: %v: want requests in both splits", target, n)
		}
		if strings.HasPrefix(target, targetCategory+"/") {
			targets++
			if n["tune"]+n["holdout"] < 6 {
				t.Errorf("%s: %d requests, want several", target, n["tune"]+n["holdout"])
			}
		}
	}
	if targets != 17 {
		t.Errorf("requests for %d targets, want the 17", targets)
	}
}

func TestParseGauge(t *testing.T) {
	text := "# TYPE skillsvc_search_index_bytes gauge\nskillsvc_search_index_bytes{layer=\"shared\"} 4096\nskillsvc_search_index_bytes{layer=\"team\"} 1024\nskillsvc_search_index_bytes_total 7\n"
	if got := parseGauge(strings.NewReader(text), "skillsvc_search_index_bytes"); got != 5120 {
		t.Errorf("got %d, want 5120", got)
	}
	if got := parseGauge(strings.NewReader("other 1\n"), "skillsvc_search_index_bytes"); got != -1 {
		t.Errorf("got %d without the gauge, want -1", got)
	}
}

// Every request's target resolves in the pinned library's layout: a target
// of the list under targetCategory, or a folder of its source's archive
// (folders depend on their source alone, so only the sources requests name
// are downloaded: about 15 MB, cached). That no earlier source holds a
// byte-identical copy of a corpus target, and that it falls within the
// first 10,000, only the whole corpus shows: bench-selection reports
// requests whose target is not in the library.
func TestQueriesResolve(t *testing.T) {
	l, err := corpus.ReadList("../../test/selection/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := loadQueries("../../test/selection/queries.json")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, q := range qs {
		if src, _, _ := strings.Cut(q.Target, "/"); src != targetCategory {
			named[src] = true
		}
	}
	sub := l
	sub.Sources = nil
	for _, s := range l.Sources {
		if named[s.ID] {
			sub.Sources = append(sub.Sources, s)
			delete(named, s.ID)
		}
	}
	for id := range named {
		t.Errorf("requests name source %q, which registry.json does not list", id)
	}
	c, err := corpus.Load(t.Context(), sub, corpus.Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range c.Targets {
		have[targetCategory+"/"+corpus.Slug(s.Name)] = true
	}
	for _, s := range c.Skills {
		have[s.Dir] = true
	}
	if len(c.Targets) != 17 {
		t.Errorf("%d targets, want the 17 anthropics/skills", len(c.Targets))
	}
	for _, q := range qs {
		if !have[q.Target] {
			t.Errorf("%s: target %s is not in the library", q.ID, q.Target)
		}
	}
}

// The history is made of the earlier requests alone: a seeded split, the
// same whatever the requests' order, disjoint from the measured half; one
// activation of each earlier request's target by the benchmark's user; and
// background use by other users of skills that are no request's target nor
// a copy of one, the same for the same seed.
func TestUsageHistory(t *testing.T) {
	var qs []query
	for i := range 40 {
		qs = append(qs, query{ID: fmt.Sprintf("q%02d", i), Query: "a request", Target: fmt.Sprintf("anthropic/t%d", i%5), Split: "tune"})
	}
	earlier, measured := splitRequests(qs, 1)
	if len(earlier) != 20 || len(measured) != 20 {
		t.Fatalf("split %d / %d, want halves", len(earlier), len(measured))
	}
	ids := func(qs []query) []string {
		var out []string
		for _, q := range qs {
			out = append(out, q.ID)
		}
		slices.Sort(out)
		return out
	}
	for _, id := range ids(earlier) {
		if slices.Contains(ids(measured), id) {
			t.Errorf("%s is both history and measured", id)
		}
	}
	reversed := slices.Clone(qs)
	slices.Reverse(reversed)
	e2, _ := splitRequests(reversed, 1)
	if !slices.Equal(ids(e2), ids(earlier)) {
		t.Errorf("the split depends on the requests' order")
	}
	if e3, _ := splitRequests(qs, 2); slices.Equal(ids(e3), ids(earlier)) {
		t.Errorf("seeds 1 and 2 split alike")
	}
	if slices.Equal(ids(earlier), ids(qs[:20])) || slices.Equal(ids(earlier), ids(qs[20:])) {
		t.Errorf("the split is the file's order, not seeded")
	}

	text := func(name, body string) []byte { return []byte(skillText(name, "About "+name+".", body)) }
	var lib []skill
	for i := range 5 {
		lib = append(lib, skill{Dir: fmt.Sprintf("anthropic/t%d", i), Text: text(fmt.Sprintf("t%d", i), fmt.Sprintf("steps of target %d one two three four", i)), Target: true})
	}
	// A copy of a target (its text under another category) and three
	// skills no request is about.
	lib = append(lib, skill{Dir: "mirror/t0", Text: lib[0].Text})
	for i := range 3 {
		lib = append(lib, skill{Dir: fmt.Sprintf("other/s%d", i), Text: text(fmt.Sprintf("s%d", i), fmt.Sprintf("unrelated skill %d alpha beta gamma", i))})
	}
	h := libraryHistory(lib, qs, earlier, 200, 1)
	wantTargets := map[string]int{}
	for _, q := range earlier {
		wantTargets[q.Target]++
	}
	gotTargets, background := map[string]int{}, map[string]int{}
	for _, a := range h.Activations {
		if a.User == user {
			if !strings.HasPrefix(a.Thread, "history-") || slices.Contains(ids(measured), strings.TrimPrefix(a.Thread, "history-")) {
				t.Errorf("activation of %s in thread %s: not an earlier request's", a.Dir, a.Thread)
			}
			gotTargets[a.Dir]++
			continue
		}
		background[a.Dir]++
	}
	if !maps.Equal(gotTargets, wantTargets) {
		t.Errorf("target activations %v, want one per earlier request: %v", gotTargets, wantTargets)
	}
	if h.Targets != len(earlier) || h.Background != 200 || len(h.Activations) != len(earlier)+200 {
		t.Errorf("history of %d + %d activations (%d), want %d + 200", h.Targets, h.Background, len(h.Activations), len(earlier))
	}
	for dir := range background {
		if !strings.HasPrefix(dir, "other/") {
			t.Errorf("background use of %s, a target or a copy of one", dir)
		}
	}
	if len(background) < 2 {
		t.Errorf("background use of %v: want it spread over the other skills", background)
	}
	if again := libraryHistory(lib, qs, earlier, 200, 1); !slices.Equal(again.Activations, h.Activations) {
		t.Errorf("the same seed made another history")
	}
	if other := libraryHistory(lib, qs, earlier, 200, 2); slices.Equal(other.Activations, h.Activations) {
		t.Errorf("seeds 1 and 2 made the same history")
	}
	if d := libraryHistory(lib, qs, earlier, -1, 1); d.Background != len(earlier) {
		t.Errorf("default background %d, want as many as the earlier requests (%d)", d.Background, len(earlier))
	}
}

// With -usage-history the harness records the history through the binary,
// checks that it was counted, and measures each library without and with
// use: on a 200-skill library whose block holds only the first skills in
// path order, a skill the earlier requests used is in the block without a
// query with use and not without it.
func TestSmallRunWithUse(t *testing.T) {
	testserver.Integration(t, "the skillsvc binary")
	dir := t.TempDir()
	targets, skills := smallLibrary()
	var qs []query
	for i := range 6 {
		qs = append(qs,
			query{ID: fmt.Sprintf("inv%d", i), Query: "pull the amount due and tax out of these supplier invoices", Target: "anthropic/invoice-totals", Split: "tune", Lang: "en"},
			// A skill the path-ordered block never reaches: sailing
			// sorts after most of the filler.
			query{ID: fmt.Sprintf("sail%d", i), Query: "advice on sailing chapter 13", Target: "filler/sailing-guide-13", Split: "holdout", Lang: "en"})
	}
	queries := filepath.Join(dir, "queries.json")
	data, _ := json.Marshal(qs)
	if err := os.WriteFile(queries, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A short flush interval only makes the history counted sooner; what
	// is counted, and so what is measured, is the same.
	o, err := parseOptions([]string{"-queries", queries, "-json", filepath.Join(dir, "out.json"), "-usage-history", "-usage-flush-interval", "200ms"})
	if err != nil {
		t.Fatal(err)
	}
	o.load = libraryOf(targets, skills)
	r, out := runReport(t, o, filepath.Join(dir, "out.json"))
	var uses []string
	for _, l := range r.Libraries {
		uses = append(uses, l.Use)
		if l.History == nil || l.History.Recorded != int64(l.History.Targets+l.History.Background) || l.History.Targets == 0 {
			t.Errorf("%s, use %s: history %+v: want every activation counted", l.Name, l.Use, l.History)
		}
	}
	if !slices.Equal(uses, []string{useOff, useOn, useOff, useOn}) {
		t.Fatalf("libraries' use %v, want each library off and on", uses)
	}
	if len(r.Effects) != 2 {
		t.Fatalf("%d effects, want one per library", len(r.Effects))
	}
	off, on := r.Libraries[2], r.Libraries[3]
	sailed := 0
	for i, o := range off.Outcomes {
		if o.ID != on.Outcomes[i].ID {
			t.Fatalf("request %d: %s without use, %s with", i, o.ID, on.Outcomes[i].ID)
		}
		if o.Target != "filler/sailing-guide-13" {
			continue
		}
		sailed++
		if o.NoQuery || !on.Outcomes[i].NoQuery {
			t.Errorf("%s: in the block without a query %v without use and %v with, want false and true", o.ID, o.NoQuery, on.Outcomes[i].NoQuery)
		}
	}
	if sailed == 0 {
		t.Fatalf("no measured request for the sailing guide: %+v", off.Outcomes)
	}
	if e := r.Effects[1]; e.Rows[2].NoQuery <= 0 || e.NoQueryChanged != sailed {
		t.Errorf("effect %+v: want the block without a query to gain the sailing guide's %d requests", e, sailed)
	}
	for _, s := range []string{"Effect of use (on − off)", "in block w/o query", "| off |", " on |"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}

// runReport runs the benchmark with o and returns the report it wrote to
// jsonOut (o's -json) and what it printed.
func runReport(t *testing.T, o options, jsonOut string) (report, bytes.Buffer) {
	t.Helper()
	cl := &loadbench.Cleanups{}
	t.Cleanup(cl.Run)
	var out, log bytes.Buffer
	if err := run(t.Context(), o, cl, &out, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	var r report
	data, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r, out
}
