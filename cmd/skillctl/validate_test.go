package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// ctlResult is what one skillctl run printed and how it exited.
type ctlResult struct {
	code           int
	stdout, stderr string
}

// runCtl runs skillctl in-process with env as its whole environment (a
// config file of the test's own unless env names one).
func runCtl(t *testing.T, env map[string]string, args ...string) ctlResult {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["SKILLCTL_CONFIG"]; !ok {
		env["SKILLCTL_CONFIG"] = filepath.Join(t.TempDir(), "config.yaml")
	}
	var out, errb bytes.Buffer
	code := run(t.Context(), args, &out, &errb, func(k string) string { return env[k] }, false)
	return ctlResult{code, out.String(), errb.String()}
}

// sample is one case of test/skills-ref/samples.json.
type sample struct {
	Case       string            `json:"case"`
	Folder     string            `json:"folder"`
	Files      map[string]string `json:"files"`
	Skillctl   string            `json:"skillctl"`
	SkillsRef  string            `json:"skills_ref"`
	Difference string            `json:"difference"`
}

func loadSamples(t *testing.T) []sample {
	t.Helper()
	b, err := os.ReadFile("../../test/skills-ref/samples.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []sample }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 30 {
		t.Fatalf("only %d samples", len(f.Cases))
	}
	return f.Cases
}

// writeSkill makes a skill folder named folder under a new temp dir.
func writeSkill(t *testing.T, folder string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestValidateSamples: validate says of each sample what samples.json
// expects (the file test/skills-ref also holds skills-ref to), with the
// exit code CI reads.
func TestValidateSamples(t *testing.T) {
	for _, s := range loadSamples(t) {
		t.Run(s.Case, func(t *testing.T) {
			dir := writeSkill(t, s.Folder, s.Files)
			r := runCtl(t, nil, "validate", dir)
			want := map[string]int{"valid": exitOK, "invalid": exitInvalid}[s.Skillctl]
			if r.code != want {
				t.Fatalf("validate = exit %d, want %d (%s):\n%s%s", r.code, want, s.Skillctl, r.stdout, r.stderr)
			}
			if want == exitInvalid && !strings.Contains(r.stdout, "error [") {
				t.Errorf("invalid without an error line:\n%s", r.stdout)
			}
		})
	}
}

// TestValidateProblems: each problem names its file, field, rule and
// value, as the server's SkillProblem does; warnings do not fail.
func TestValidateProblems(t *testing.T) {
	long := strings.Repeat("d", skillmd.MaxDescriptionLen+1)
	for _, tc := range []struct {
		name   string
		folder string
		md     string
		code   int
		want   []map[string]string // problems, in order
	}{
		{"name differs", "pdf", "---\nname: pdf-tool\ndescription: x\n---\n", exitInvalid,
			[]map[string]string{{"severity": "SEVERITY_ERROR", "file": "SKILL.md", "field": "name", "rule": "name-matches-folder", "value": "pdf-tool"}}},
		{"missing name and description", "pdf", "---\nlicense: MIT\n---\n", exitInvalid,
			[]map[string]string{{"rule": "name-required", "field": "name"}, {"rule": "description-required", "field": "description"}}},
		{"bad name", "Pdf_Tool", "---\nname: Pdf_Tool\ndescription: x\n---\n", exitInvalid,
			[]map[string]string{{"rule": "folder-name", "field": "name", "file": "", "value": "Pdf_Tool"}, {"rule": "name-format", "field": "name", "file": "SKILL.md", "value": "Pdf_Tool"}}},
		{"long name", strings.Repeat("a", 65), "---\nname: " + strings.Repeat("a", 65) + "\ndescription: x\n---\n", exitInvalid,
			[]map[string]string{{"rule": "folder-name", "severity": "SEVERITY_ERROR"}, {"rule": "name-length", "severity": "SEVERITY_WARNING"}}},
		{"frontmatter name not a skill name", "pdf", "---\nname: PDF Tools\ndescription: x\n---\n", exitInvalid,
			[]map[string]string{{"severity": "SEVERITY_ERROR", "rule": "name-format", "value": "PDF Tools"}}},
		{"long description warns", "pdf", "---\nname: pdf\ndescription: " + long + "\n---\n", exitOK,
			[]map[string]string{{"severity": "SEVERITY_WARNING", "rule": "description-length", "field": "description"}}},
		{"metadata value warns", "pdf", "---\nname: pdf\ndescription: x\nmetadata:\n  owner: [a]\n---\n", exitOK,
			[]map[string]string{{"severity": "SEVERITY_WARNING", "rule": "field-type", "field": "metadata.owner"}}},
		{"bad yaml", "pdf", "---\nname: [\n---\n", exitInvalid,
			[]map[string]string{{"rule": "yaml", "field": "frontmatter"}}},
		{"no frontmatter", "pdf", "# PDF\n", exitInvalid,
			[]map[string]string{{"rule": "frontmatter", "field": "frontmatter"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSkill(t, tc.folder, map[string]string{"SKILL.md": tc.md})
			r := runCtl(t, nil, "validate", "--json", dir)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			var out struct {
				Valid  bool
				Skills []struct {
					Name     string
					Valid    bool
					Problems []map[string]string
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			if len(out.Skills) != 1 || out.Valid != (tc.code == exitOK) || out.Skills[0].Name != tc.folder {
				t.Fatalf("result = %+v", out)
			}
			got := out.Skills[0].Problems
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %v, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				for k, v := range w {
					if got[i][k] != v {
						t.Errorf("problem %d %s = %q, want %q (%v)", i, k, got[i][k], v, got[i])
					}
				}
				if got[i]["message"] == "" {
					t.Errorf("problem %d has no message", i)
				}
			}
		})
	}
}

// TestValidateLibrary: a folder of skills (flat and under categories) is
// validated skill by skill; one invalid skill fails the run.
func TestValidateLibrary(t *testing.T) {
	lib := t.TempDir()
	put := func(rel, text string) {
		p := filepath.Join(lib, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("notes/SKILL.md", "---\nname: notes\ndescription: Notes.\n---\n")
	put("docs/pdf/SKILL.md", "---\nname: pdf\ndescription: PDFs.\n---\n")
	put("docs/csv/SKILL.md", "---\nname: tables\ndescription: CSV.\n---\n")
	put(".git/x/SKILL.md", "not a skill")
	r := runCtl(t, nil, "validate", lib)
	if r.code != exitInvalid {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	for _, want := range []string{"valid    notes", "valid    pdf", "invalid  csv", "name-matches-folder"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, ".git") {
		t.Errorf("a dot folder was validated:\n%s", r.stdout)
	}
	os.Remove(filepath.Join(lib, "docs/csv/SKILL.md"))
	if r := runCtl(t, nil, "validate", "-q", lib); r.code != exitOK || r.stdout != "" {
		t.Errorf("a valid library: exit %d, output %q (quiet prints nothing)", r.code, r.stdout)
	}
}

// TestValidateFolderRules: dotfiles are ignored, symlinks refused and the
// extension's limits enforced without reading the files.
func TestValidateFolderRules(t *testing.T) {
	okMD := "---\nname: pdf\ndescription: PDFs.\n---\n"
	t.Run("dotfiles ignored", func(t *testing.T) {
		dir := writeSkill(t, "pdf", map[string]string{"SKILL.md": okMD, ".DS_Store": "x", ".git/config": "x"})
		s, err := readSkillDir(t.Context(), dir)
		if err != nil || len(s.Files) != 1 || s.Files[0].Rel != "SKILL.md" {
			t.Fatalf("files = %+v, %v", s.Files, err)
		}
	})
	t.Run("symlink refused", func(t *testing.T) {
		dir := writeSkill(t, "pdf", map[string]string{"SKILL.md": okMD})
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
			t.Fatal(err)
		}
		r := runCtl(t, nil, "validate", dir)
		if r.code != exitInvalid || !strings.Contains(r.stdout, "regular-files") || !strings.Contains(r.stdout, "passwd") {
			t.Fatalf("exit %d\n%s", r.code, r.stdout)
		}
	})
	t.Run("too many files", func(t *testing.T) {
		files := map[string]string{"SKILL.md": okMD}
		for i := range skillmd.MaxSkillFiles {
			files[fmt.Sprintf("refs/%d.md", i)] = "x"
		}
		dir := writeSkill(t, "pdf", files)
		r := runCtl(t, nil, "validate", dir)
		if r.code != exitInvalid || !strings.Contains(r.stdout, "max-files") {
			t.Fatalf("exit %d\n%s", r.code, r.stdout)
		}
	})
	t.Run("too many bytes", func(t *testing.T) {
		dir := writeSkill(t, "pdf", map[string]string{"SKILL.md": okMD})
		f, err := os.Create(filepath.Join(dir, "big.bin"))
		if err != nil {
			t.Fatal(err)
		}
		// Sparse: the size is checked, the bytes are never read.
		if err := f.Truncate(skillmd.MaxSkillBytes + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := runCtl(t, nil, "validate", dir)
		if r.code != exitInvalid || !strings.Contains(r.stdout, "max-bytes") {
			t.Fatalf("exit %d\n%s", r.code, r.stdout)
		}
	})
	t.Run("nested SKILL.md and odd paths", func(t *testing.T) {
		dir := writeSkill(t, "pdf", map[string]string{"SKILL.md": okMD, "sub/SKILL.md": okMD, "back\\slash.md": "x"})
		r := runCtl(t, nil, "validate", dir)
		if r.code != exitInvalid || !strings.Contains(r.stdout, "nested-skill") || !strings.Contains(r.stdout, "path-canonical") {
			t.Fatalf("exit %d\n%s", r.code, r.stdout)
		}
	})
	t.Run("SKILL.md named instead of its folder", func(t *testing.T) {
		dir := writeSkill(t, "pdf", map[string]string{"SKILL.md": okMD})
		if r := runCtl(t, nil, "validate", filepath.Join(dir, "SKILL.md")); r.code != exitOK || !strings.Contains(r.stdout, "valid    pdf") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("missing folder is a usage error", func(t *testing.T) {
		r := runCtl(t, nil, "validate", filepath.Join(t.TempDir(), "nope"))
		if r.code != exitUsage || !strings.Contains(r.stderr, "no such file") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("no argument is a usage error", func(t *testing.T) {
		if r := runCtl(t, nil, "validate"); r.code != exitUsage {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})
}

// TestValidateIsCheckFolder: validate lists exactly the problems the
// server's rule set (skillmd.CheckFolder over every file's bytes) finds,
// for every sample and for what only a whole-file read sees (a SKILL.md
// not UTF-8 past its frontmatter).
func TestValidateIsCheckFolder(t *testing.T) {
	okMD := "---\nname: pdf\ndescription: PDFs.\n---\n"
	cases := []sample{
		{Case: "not UTF-8 past the frontmatter", Folder: "pdf", Files: map[string]string{
			"SKILL.md": okMD + strings.Repeat("x", skillmd.MaxFrontmatterBytes) + "\xff\n"}},
		{Case: "non-NFC path", Folder: "pdf", Files: map[string]string{"SKILL.md": okMD, "cafe\u0301.md": "x"}},
	}
	for _, s := range append(cases, loadSamples(t)...) {
		t.Run(s.Case, func(t *testing.T) {
			dir := writeSkill(t, s.Folder, s.Files)
			var files []skillmd.File
			for rel, text := range s.Files {
				if !strings.HasPrefix(filepath.Base(rel), ".") {
					files = append(files, skillmd.File{Path: rel, Data: []byte(text)})
				}
			}
			sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
			var want []map[string]any
			for _, p := range skillmd.CheckFolder(filepath.Base(dir), files) {
				m := map[string]any{"severity": map[skillmd.Severity]string{skillmd.SeverityError: "SEVERITY_ERROR", skillmd.SeverityWarning: "SEVERITY_WARNING"}[p.Severity]}
				for k, v := range map[string]string{"file": p.File, "field": p.Field, "rule": p.Rule, "value": p.Value, "message": p.Message} {
					if v != "" {
						m[k] = v
					}
				}
				want = append(want, m)
			}
			r := runCtl(t, nil, "validate", "--json", dir)
			var out struct {
				Skills []struct{ Problems []map[string]any }
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Skills) != 1 {
				t.Fatalf("%v\n%s%s", err, r.stdout, r.stderr)
			}
			got, _ := json.Marshal(out.Skills[0].Problems)
			wantJSON, _ := json.Marshal(want)
			if want == nil {
				wantJSON = []byte("[]")
			}
			if string(got) != string(wantJSON) {
				t.Errorf("validate problems:\n%s\nCheckFolder:\n%s", got, wantJSON)
			}
		})
	}
}

// TestCategoryOf: a folder found under a library's category folder is
// pushed to that category; a folder named itself takes --category.
func TestCategoryOf(t *testing.T) {
	for _, tc := range []struct{ arg, dir, flag, want string }{
		{"lib", "lib/docs/pdf", "", "docs"},
		{"lib", "lib/pdf", "x", "x"},
		{"lib/pdf", "lib/pdf", "x", "x"},
		{"lib/pdf/SKILL.md", "lib/pdf", "", ""},
		{"./lib/", "lib/docs/pdf", "", "docs"},
	} {
		if got := categoryOf(tc.arg, tc.dir, tc.flag); got != tc.want {
			t.Errorf("categoryOf(%q, %q, %q) = %q, want %q", tc.arg, tc.dir, tc.flag, got, tc.want)
		}
	}
}
