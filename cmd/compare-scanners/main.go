// Command compare-scanners runs internal/scan and a published skill
// scanner, cisco-ai-skill-scanner (PyPI, pinned in
// test/scanners/requirements.txt), over the same skills and prints where
// they agree: our crafted malicious skills
// (internal/scan/testdata/malicious), the 17 public anthropics/skills and a
// sample of the public selection corpus (both from the packages
// test/selection/registry.json pins, in the selection cache, never
// committed). Their scanner runs offline with its static analyzers only
// (static, bytecode, pipeline and behavioral: no LLM, no API key), inside a
// network namespace of its own (unshare -n) where the machine allows it.
//
//	make compare-scanners
//	go run ./cmd/compare-scanners -skill-scanner .tools/skillscan-venv/bin/skill-scanner -corpus 500
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
)

func main() {
	bin := flag.String("skill-scanner", ".tools/skillscan-venv/bin/skill-scanner", "cisco-ai-skill-scanner's CLI")
	n := flag.Int("corpus", 500, "public corpus skills to sample (their SKILL.md alone); 0 = none")
	list := flag.String("list", "test/selection/registry.json", "the pinned public skills")
	jsonOut := flag.String("json", "", "also write every skill's results to this file")
	keep := flag.String("keep", "", "stage the skills and reports in this new directory and keep them (default: a temporary one, removed)")
	flag.Parse()
	if err := run(context.Background(), *bin, *list, *n, *jsonOut, *keep); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, bin, listFile string, n int, jsonOut, keep string) error {
	start := time.Now()
	stage := keep
	if keep == "" {
		var err error
		if stage, err = os.MkdirTemp("", "compare-scanners-"); err != nil {
			return err
		}
		defer os.RemoveAll(stage)
	} else if err := os.Mkdir(stage, 0o755); err != nil {
		return err
	}
	if abs, err := filepath.Abs(stage); err == nil {
		stage = abs
	}
	sets := map[string]string{}
	family := map[string]string{}

	crafted := filepath.Join(stage, "crafted")
	if err := os.CopyFS(crafted, os.DirFS("internal/scan/testdata/malicious")); err != nil {
		return err
	}
	sets["crafted"] = crafted
	entries, err := os.ReadDir(crafted)
	if err != nil {
		return err
	}
	for _, e := range entries {
		family[e.Name()] = CraftedFamily(e.Name())
	}

	l, err := corpus.ReadList(listFile)
	if err != nil {
		return err
	}
	public := filepath.Join(stage, "public")
	for _, t := range l.Targets {
		if _, err := l.ExtractTarget(ctx, t.Name, public, corpus.Options{}); err != nil {
			return err
		}
	}
	sets["public"] = public

	if n > 0 {
		// The whole corpus (from the cache), then every k-th skill: a
		// sample across its packages, not the first package's skills.
		c, err := corpus.Load(ctx, l, corpus.Options{})
		if err != nil {
			return err
		}
		dir := filepath.Join(stage, "corpus")
		for _, s := range sample(c.Skills, n) {
			d := filepath.Join(dir, strings.ReplaceAll(s.Dir, "/", "--"))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, "SKILL.md"), s.Text, 0o644); err != nil {
				return err
			}
		}
		sets["corpus"] = dir
	}

	var skills []Skill
	var analyzers []string
	var version string
	if out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	for _, set := range []string{"crafted", "public", "corpus"} {
		dir, ok := sets[set]
		if !ok {
			continue
		}
		t0 := time.Now()
		theirs, an, isolated, err := runCisco(ctx, bin, dir, filepath.Join(stage, set+".json"))
		if err != nil {
			return err
		}
		tTheirs := time.Since(t0)
		analyzers = an
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		t0 = time.Now()
		for _, e := range entries {
			d := filepath.Join(dir, e.Name())
			rep, err := scan.Skill(ctx, readFolder(d), scan.Limits{Timeout: 5 * time.Minute})
			if err != nil {
				return err
			}
			t, ok := theirs[filepath.Clean(d)]
			if !ok {
				return fmt.Errorf("%s: not in cisco's report", d)
			}
			skills = append(skills, Skill{Set: set, Name: e.Name(), Family: family[e.Name()], Ours: ours(rep), Theirs: t})
		}
		fmt.Fprintf(os.Stderr, "%s: %d skills; theirs %s (network namespace: %v), ours %s\n", set, len(entries), tTheirs.Round(time.Second), isolated, time.Since(t0).Round(time.Second))
	}
	fmt.Printf("## internal/scan (rules %s) and cisco-ai-skill-scanner (%s)\n\n", scan.RulesVersion, version)
	fmt.Printf("%s, %s/%s, %d CPUs, %s; their analyzers: %s.\n\n", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Since(start).Round(time.Second), strings.Join(analyzers, ", "))
	Markdown(os.Stdout, skills)
	if jsonOut != "" {
		b, err := json.MarshalIndent(skills, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(jsonOut, b, 0o644)
	}
	return nil
}

// sample takes n of skills (those not cut), evenly spaced, in order.
func sample(skills []corpus.Skill, n int) []corpus.Skill {
	var whole []corpus.Skill
	for _, s := range skills {
		if !s.Cut {
			whole = append(whole, s)
		}
	}
	if n >= len(whole) {
		return whole
	}
	out := make([]corpus.Skill, 0, n)
	for i := range n {
		out = append(out, whole[i*len(whole)/n])
	}
	return out
}

// runCisco runs skill-scanner scan-all over dir's skill folders with its
// offline analyzers, in a network namespace of its own when unshare can
// make one (root, or user namespaces), and parses its JSON report.
func runCisco(ctx context.Context, bin, dir, report string) (map[string]Result, []string, bool, error) {
	args := []string{"scan-all", dir, "--use-behavioral", "--format", "json", "--compact", "--output-json", report}
	isolated := exec.CommandContext(ctx, "unshare", "-n", "true").Run() == nil
	cmd := exec.CommandContext(ctx, bin, args...)
	if isolated {
		cmd = exec.CommandContext(ctx, "unshare", append([]string{"-n", bin}, args...)...)
	}
	// No key for any of its online analyzers reaches it.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(k, "API_KEY") && !strings.HasPrefix(k, "SKILL_SCANNER_LLM") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, nil, isolated, fmt.Errorf("skill-scanner: %w\n%s", err, out)
	}
	f, err := os.Open(report)
	if err != nil {
		return nil, nil, isolated, err
	}
	defer f.Close()
	res, an, err := ParseCisco(f)
	return res, an, isolated, err
}

// readFolder reads a skill folder as skillctl scan does (names starting
// with "." skipped).
func readFolder(dir string) []scan.File {
	var files []scan.File
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, scan.File{Path: filepath.ToSlash(rel), Data: b, Executable: info.Mode()&0o111 != 0})
		return nil
	})
	return files
}
