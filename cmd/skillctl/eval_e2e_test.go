package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The coexistence and trigger-eval tests run skillctl against the real
// binary on MinIO with the default limits, over a small library whose
// skills are distinct but for one pair.

const pdfFormsMD = "---\nname: pdf-forms\ndescription: Fill in PDF forms - find the form fields of a PDF and fill each PDF form field with a value.\n---\n" +
	"# Filling PDF forms\n\nList the PDF form fields with scripts/fields.py, then fill each PDF form field and save the PDF.\n"

// pdfFormsEvals work: each retrieves pdf-forms first, or (the last) not.
const pdfFormsEvals = `[{"query":"fill in the fields of this PDF form","should_trigger":true},` +
	`{"query":"fill the PDF form fields with my address","should_trigger":true},` +
	`{"query":"rename the columns of this CSV spreadsheet","should_trigger":false}]`

// meetingNotesEvals do not: the first retrieves pdf-forms.
const meetingNotesEvals = `[{"query":"fill in the PDF form fields","should_trigger":true},` +
	`{"query":"summarize the meeting notes and action items","should_trigger":true}]`

var evalLibrary = map[string]string{
	"alice/skills/pdf-forms/SKILL.md":              pdfFormsMD,
	"alice/skills/pdf-forms/eval_queries.json":     pdfFormsEvals,
	"alice/skills/meeting-notes/SKILL.md":          "---\nname: meeting-notes\ndescription: Summarize meeting notes into decisions and action items.\n---\n# Meeting notes\n\nSummarize the meeting: decisions, action items, owners.\n",
	"alice/skills/meeting-notes/eval_queries.json": meetingNotesEvals,
	"alice/skills/csv-clean/SKILL.md":              "---\nname: csv-clean\ndescription: Clean CSV spreadsheets - rename columns, drop empty rows, fix dates.\n---\n# CSV\n\nUse pandas to clean the CSV spreadsheet.\n",
	"alice/skills/git-commits/SKILL.md":            "---\nname: git-commits\ndescription: Write git commit messages in the conventional style.\n---\n# Commits\n\nSubject line under 50 characters.\n",
	"_shared/skills/pdf-forms/SKILL.md":            pdfFormsMD,
	"_shared/skills/csv-clean/SKILL.md":            "---\nname: csv-clean\ndescription: Clean CSV spreadsheets - rename columns, drop empty rows, fix dates.\n---\n# CSV\n\nUse pandas to clean the CSV spreadsheet.\n",
}

// startEvalServer uploads evalLibrary to a new bucket and serves it with the
// real binary and args; it returns the gRPC address.
func startEvalServer(t *testing.T, args ...string) string {
	t.Helper()
	return startServerWith(t, evalLibrary, args...)
}

// published is the part of a PublishSkillResponse the tests read.
type published struct {
	Valid    bool
	Problems []struct{ Severity, Rule, Value, Message string }
	Evals    []struct {
		Query         string
		ShouldTrigger bool
		Rank          int
		TopPath       string
		TopName       string
	}
}

func (p published) coexistence() []string {
	var out []string
	for _, pr := range p.Problems {
		if pr.Rule == "coexistence" {
			out = append(out, pr.Severity+": "+pr.Message)
		}
	}
	return out
}

func pushJSON(t *testing.T, env map[string]string, args ...string) published {
	t.Helper()
	r := mustRun(t, env, append([]string{"push", "--json"}, args...)...)
	var p published
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	return p
}

// TestCoexistenceEndToEnd: a publish whose description retrieves an
// existing skill first is warned, naming it; a near-duplicate is warned; a
// distinct skill is not; validate_only returns the folder's evals ranked
// against the library with it; a malformed eval_queries.json is a warning
// and the publish goes through; skillctl validate reports coexistence with
// a server named, and says it did not check without one.
func TestCoexistenceEndToEnd(t *testing.T) {
	addr := startEvalServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}

	rival := writeSkill(t, "form-filler", map[string]string{"SKILL.md": "---\nname: form-filler\ndescription: Fill in PDF forms.\n---\nAsk for each value.\n"})
	p := pushJSON(t, env, rival)
	if got := p.coexistence(); len(got) != 1 || !strings.Contains(got[0], "SEVERITY_WARNING: competes with skill pdf-forms (pdf-forms)") || !strings.Contains(got[0], "description retrieve") {
		t.Errorf("a skill whose description retrieves pdf-forms first: %q", got)
	}
	mustRun(t, env, "rm", "form-filler") // the library as it was, for what follows

	dup := writeSkill(t, "pdf-form-filling", map[string]string{"SKILL.md": strings.Replace(pdfFormsMD, "name: pdf-forms", "name: pdf-form-filling", 1)})
	p = pushJSON(t, env, dup, "--dry-run")
	if got := p.coexistence(); len(got) != 1 || !strings.Contains(got[0], "competes with skill pdf-forms (pdf-forms): it nearly duplicates it") {
		t.Errorf("a near-duplicate of pdf-forms: %q", got)
	}

	distinct := writeSkill(t, "sql-queries", map[string]string{
		"SKILL.md":          "---\nname: sql-queries\ndescription: Write SQL queries for Postgres with joins and window functions.\n---\n# SQL\n\nPrefer CTEs.\n",
		"eval_queries.json": `[{"query":"write a postgres query with a window function","should_trigger":true},{"query":"fill in this PDF form","should_trigger":false}]`,
	})
	p = pushJSON(t, env, distinct, "--dry-run")
	if got := p.coexistence(); len(got) != 0 || !p.Valid {
		t.Errorf("a distinct skill: valid %v, %q", p.Valid, got)
	}
	if len(p.Evals) != 2 || p.Evals[0].Rank != 1 || p.Evals[1].Rank != 0 || p.Evals[1].TopPath != "/skills/pdf-forms" || p.Evals[1].TopName != "pdf-forms" {
		t.Errorf("validate_only evals: %+v", p.Evals)
	}

	bad := writeSkill(t, "haiku", map[string]string{"SKILL.md": "---\nname: haiku\ndescription: Write haiku poems about nature.\n---\n5-7-5\n", "eval_queries.json": `{"query": "a haiku"}`})
	p = pushJSON(t, env, bad)
	if len(p.Problems) != 1 || p.Problems[0].Rule != "eval-queries" || p.Problems[0].Severity != "SEVERITY_WARNING" || !strings.Contains(p.Problems[0].Message, "array of objects") || len(p.Evals) != 0 {
		t.Errorf("a malformed eval_queries.json: %+v", p)
	}
	if r := mustRun(t, map[string]string{}, "validate", bad); !strings.Contains(r.stdout, "warning [eval-queries] eval_queries.json") || !strings.Contains(r.stdout, "coexistence not checked: no server named") {
		t.Errorf("validate offline:\n%s", r.stdout)
	}

	again := writeSkill(t, "pdf-helper", map[string]string{"SKILL.md": "---\nname: pdf-helper\ndescription: Fill in PDF forms.\n---\nAsk for each value.\n"})
	if r := mustRun(t, env, "validate", again); !strings.Contains(r.stdout, "warning [coexistence] folder: competes with skill pdf-forms") {
		t.Errorf("validate with a server:\n%s", r.stdout)
	}
	var v struct {
		Skills []struct{ Coexistence string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "validate", again, "--offline", "--json").stdout), &v); err != nil || len(v.Skills) != 1 || v.Skills[0].Coexistence != "not checked: offline (--offline)" {
		t.Errorf("validate --offline: %+v, %v", v, err)
	}
}

// TestCoexistenceReviewEndToEnd: under --library.review, a member's
// proposal to the shared library keeps the warnings its publish found, and
// the admin listing pending versions sees them.
func TestCoexistenceReviewEndToEnd(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("skillctl-review-", 4)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startEvalServer(t, "--auth.mode=jwt", "--auth.jwt.secret-file="+secret, "--library.review")
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	for name, args := range map[string][]string{
		"bob":   {"--user", "bob", "--thread", "t1"},
		"admin": {"--admin", "--user", "ops", "--thread", "t1"},
	} {
		out, err := exec.Command(bin, append([]string{"token", "--ttl", "10m", "--auth.jwt.secret-file", secret}, args...)...).Output()
		if err != nil {
			t.Fatalf("skillsvc token %v: %v", args, err)
		}
		file := filepath.Join(t.TempDir(), name+".token")
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
		mustRun(t, env, "config", "set-context", name, "--target", addr, "--token-file", file, "--library", "shared")
	}
	as := func(ctx string) map[string]string {
		return map[string]string{"SKILLCTL_CONTEXT": ctx, "SKILLCTL_CONFIG": env["SKILLCTL_CONFIG"]}
	}
	dir := writeSkill(t, "form-filler", map[string]string{"SKILL.md": "---\nname: form-filler\ndescription: Fill in PDF forms.\n---\nAsk for each value.\n"})
	r := mustRun(t, as("bob"), "push", dir)
	if !strings.Contains(r.stdout, "pending review form-filler") || !strings.Contains(r.stdout, "warning [coexistence]") {
		t.Fatalf("bob's proposal:\n%s", r.stdout)
	}
	r = mustRun(t, as("admin"), "versions", "form-filler", "--state", "pending")
	if !strings.Contains(r.stdout, "pending:\n  warning [coexistence] folder: competes with skill pdf-forms (pdf-forms)") {
		t.Errorf("the reviewer does not see the warning:\n%s", r.stdout)
	}
	var vs struct {
		Versions []struct {
			Problems []struct{ Rule, Value string }
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, as("admin"), "versions", "form-filler", "--json").stdout), &vs); err != nil || len(vs.Versions) != 1 ||
		len(vs.Versions[0].Problems) != 1 || vs.Versions[0].Problems[0].Rule != "coexistence" || vs.Versions[0].Problems[0].Value != "pdf-forms" {
		t.Errorf("ListSkillVersions: %+v, %v", vs, err)
	}
}

// evalReport is skillctl eval --json.
type evalReport struct {
	K      int
	Passed bool
	Skills []struct {
		Name, Path       string
		ShouldTrigger    int      `json:"should_trigger"`
		First            int      `json:"first"`
		InTopK           int      `json:"in_top_k"`
		ShouldNotTrigger int      `json:"should_not_trigger"`
		FalseFirst       int      `json:"false_first"`
		HitRate          *float64 `json:"hit_rate"`
		FalseRate        *float64 `json:"false_trigger_rate"`
		Passed           bool
		Failures         []struct {
			Query   string
			TopPath string `json:"top_path"`
			TopName string `json:"top_name"`
			Rank    int
		}
		Problems []json.RawMessage
	}
}

func evalJSON(t *testing.T, r ctlResult) evalReport {
	t.Helper()
	var rep evalReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s%s", err, r.stdout, r.stderr)
	}
	return rep
}

// TestEvalEndToEnd: skillctl eval over alice's real library runs each
// skill's eval_queries.json through SearchSkills: pdf-forms' queries
// retrieve it first (and its should-not query does not), one of
// meeting-notes' retrieves pdf-forms instead, named as the failure; one
// skill by name; a threshold missed exits 1; --dir runs a folder through
// the server before publishing.
func TestEvalEndToEnd(t *testing.T) {
	addr := startEvalServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}

	r := mustRun(t, env, "eval")
	for _, want := range []string{
		"SKILL", "TOP 5",
		"pdf-forms      2  2/2 1.00  2/2 1.00  1  0/1 0.00  ok",
		"meeting-notes  2  1/2 0.50",
		`miss "fill in the PDF form fields": `, "first pdf-forms (/skills/pdf-forms)",
	} {
		if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("eval lacks %q:\n%s", want, r.stdout)
		}
	}

	rep := evalJSON(t, mustRun(t, env, "eval", "--json", "-k", "3"))
	if rep.K != 3 || !rep.Passed || len(rep.Skills) != 2 {
		t.Fatalf("eval --json: %+v", rep)
	}
	byName := map[string]int{rep.Skills[0].Name: 0, rep.Skills[1].Name: 1}
	pf, mn := rep.Skills[byName["pdf-forms"]], rep.Skills[byName["meeting-notes"]]
	if pf.ShouldTrigger != 2 || pf.First != 2 || pf.ShouldNotTrigger != 1 || pf.FalseFirst != 0 || len(pf.Failures) != 0 || pf.Path != "/skills/pdf-forms" {
		t.Errorf("pdf-forms: %+v", pf)
	}
	if mn.ShouldTrigger != 2 || mn.First != 1 || *mn.HitRate != 0.5 || mn.FalseRate != nil || len(mn.Failures) != 1 ||
		mn.Failures[0].Query != "fill in the PDF form fields" || mn.Failures[0].TopName != "pdf-forms" {
		t.Errorf("meeting-notes: %+v", mn)
	}

	rep = evalJSON(t, mustRun(t, env, "eval", "pdf-forms", "--json"))
	if len(rep.Skills) != 1 || rep.Skills[0].Name != "pdf-forms" {
		t.Errorf("eval pdf-forms: %+v", rep)
	}
	r = runCtl(t, env, "eval", "--json", "--min-hit-rate", "0.8")
	if r.code != exitInvalid {
		t.Errorf("a missed threshold: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep := evalJSON(t, r); rep.Passed || rep.Skills[byName["meeting-notes"]].Passed || !rep.Skills[byName["pdf-forms"]].Passed {
		t.Errorf("thresholds: %+v", rep)
	}
	if r := runCtl(t, env, "eval", "csv-clean"); r.code != exitNotFound {
		t.Errorf("eval of a skill without eval_queries.json: exit %d\n%s", r.code, r.stderr)
	}

	dir := writeSkill(t, "sql-queries", map[string]string{
		"SKILL.md":          "---\nname: sql-queries\ndescription: Write SQL queries for Postgres with joins and window functions.\n---\n# SQL\n\nPrefer CTEs.\n",
		"eval_queries.json": `[{"query":"write a postgres query with a window function","should_trigger":true},{"query":"fill in the PDF form fields","should_trigger":true}]`,
	})
	rep = evalJSON(t, mustRun(t, env, "eval", "--dir", dir, "--json"))
	if len(rep.Skills) != 1 || rep.Skills[0].Name != "sql-queries" || rep.Skills[0].ShouldTrigger != 2 || rep.Skills[0].First != 1 ||
		len(rep.Skills[0].Failures) != 1 || rep.Skills[0].Failures[0].TopPath != "/skills/pdf-forms" {
		t.Errorf("eval --dir: %+v", rep)
	}
	// Its should-trigger query that finds pdf-forms first is a
	// coexistence warning too.
	var pr struct{ Rule, Message string }
	if len(rep.Skills) != 1 || len(rep.Skills[0].Problems) != 1 || json.Unmarshal(rep.Skills[0].Problems[0], &pr) != nil || pr.Rule != "coexistence" ||
		pr.Message != `competes with skill pdf-forms (pdf-forms): 1 of its eval queries that should trigger it retrieves that skill first (e.g. "fill in the PDF form fields")` {
		t.Errorf("eval --dir problems: %+v", pr)
	}
	r = mustRun(t, env, "eval", "--dir", dir)
	if !strings.Contains(r.stdout, "sql-queries") || !strings.Contains(r.stdout, `miss "fill in the PDF form fields"`) {
		t.Errorf("eval --dir:\n%s", r.stdout)
	}
	// Nothing was published.
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); strings.Contains(got, "sql-queries") {
		t.Errorf("eval --dir published: %s", got)
	}
}
