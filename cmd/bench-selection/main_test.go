package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// archiveSkill is one SKILL.md of a test archive.
type archiveSkill struct {
	source, path, text string
	files              []string
}

// writeArchive writes targets and skills as a corpus archive of the
// committed format (test/selection/SOURCES.md).
func writeArchive(t *testing.T, file string, targets, skills []archiveSkill) {
	t.Helper()
	var m manifest
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name, text string) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(text)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range targets {
		add("targets/"+s.path, s.text)
		m.Targets = append(m.Targets, struct {
			Path  string   `json:"path"`
			Files []string `json:"files"`
		}{s.path, s.files})
	}
	for _, s := range skills {
		add("skills/"+s.source+"/"+s.path, s.text)
		m.Skills = append(m.Skills, struct {
			Source string   `json:"source"`
			Path   string   `json:"path"`
			Files  []string `json:"files"`
		}{s.source, s.path, s.files})
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	add("manifest.json", string(data))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
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
	archive := filepath.Join(dir, "corpus.tar.zst")
	writeArchive(t, archive, targets, skills)
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
	o, err := parseOptions([]string{"-corpus", archive, "-queries", queries, "-doc-targets=false", "-json", filepath.Join(dir, "out.json")})
	if err != nil {
		t.Fatal(err)
	}
	cl := &loadbench.Cleanups{}
	t.Cleanup(cl.Run)
	var out, log bytes.Buffer
	if err := run(t.Context(), o, cl, &out, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	var r report
	data, err = os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
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

// Folders in the library are unique within their category and the same
// from run to run: queries.json names its targets by them.
func TestUniqueDir(t *testing.T) {
	used := map[string]bool{}
	for _, c := range []struct{ path, want string }{
		{"skills/PDF Tools/SKILL.md", "src/pdf-tools"},
		{"other/pdf-tools/SKILL.md", "src/pdf-tools-2"},
		{"SKILL.md", "src/src"},
		{"a/b/pdf_tools/SKILL.md", "src/pdf-tools-3"},
	} {
		if got := uniqueDir(used, "src", c.path); got != c.want {
			t.Errorf("uniqueDir(%q) = %q, want %q", c.path, got, c.want)
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
