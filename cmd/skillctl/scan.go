package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// scanned is one skill folder's scan, as --format json prints it.
type scanned struct {
	Dir        string         `json:"dir"`
	Name       string         `json:"name"`
	Verdict    scan.Severity  `json:"verdict"`
	Incomplete bool           `json:"incomplete"`
	Findings   []scan.Finding `json:"findings"`
}

func (a *app) scanCmd() *cobra.Command {
	var format, failOn string
	cmd := &cobra.Command{
		Use:   "scan PATH...",
		Short: "Scan skill folders offline for injected instructions, hidden text, secrets and dangerous scripts",
		Long: `scan checks each skill's files, offline and without running anything, with the rules the
server applies to new library states (docs/authors/scanning.md lists them): instructions that try
to override the agent or send data away; hidden text (Unicode tag characters, bidirectional
controls, zero-width runs, instructions in HTML comments or in frontmatter fields the prompt block
does not show); secrets (gitleaks' default rules); scripts that download and run code, run encoded
payloads, write outside the skill (shell start-up files, ~/.ssh, /etc, crontab) or call raw IP
addresses; binaries named as text and native executables. Each finding has a rule id, a severity
(low, medium, high), a file and a line.

PATH is a skill folder (it holds SKILL.md; naming the SKILL.md will do) or a library: its skills
are found with the library index's rule (<skill>/SKILL.md, or <category>/<skill>/SKILL.md).
Names starting with "." are ignored, as push ignores them.

--format text (the default) prints findings per skill; json prints them as one object; sarif
prints SARIF 2.1.0 for code-scanning tools (GitHub, GitLab, VS Code's SARIF viewer).

Exit code 1 when a skill has a finding at or above --fail-on (default high; none never fails),
2 when a path cannot be read, else 0.`,
		Example: `  skillctl scan ./pdf
  skillctl scan --fail-on medium ./library
  skillctl scan --format sarif ./library > skills.sarif`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.jsonOut {
				format = "json"
			}
			if !slices.Contains([]string{"text", "json", "sarif"}, format) {
				return usageErr(fmt.Errorf("--format %q: want text, json or sarif", format))
			}
			threshold := scan.Severity("none")
			if failOn != "none" {
				s, err := scan.ParseSeverity(failOn)
				if err != nil {
					return usageErr(fmt.Errorf("--fail-on: %w", err))
				}
				threshold = s
			}
			var results []scanned
			reports := map[string]scan.Report{}
			for _, arg := range args {
				dirs, err := scanFolders(arg)
				if err != nil {
					return usageErr(err)
				}
				for _, dir := range dirs {
					files, err := readScanFiles(cmd, dir)
					if err != nil {
						return usageErr(err)
					}
					rep, err := scan.Skill(cmd.Context(), files, scan.Limits{})
					if err != nil {
						return err
					}
					key := filepath.ToSlash(dir)
					reports[key] = rep
					results = append(results, scanned{Dir: key, Name: filepath.Base(dir), Verdict: rep.Verdict, Incomplete: rep.Incomplete, Findings: rep.Findings})
				}
			}
			switch format {
			case "sarif":
				b, err := scan.SARIF(reports)
				if err != nil {
					return err
				}
				if _, err := a.stdout.Write(append(b, '\n')); err != nil {
					return err
				}
			case "json":
				enc := json.NewEncoder(a.jsonStdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					RulesVersion string    `json:"rulesVersion"`
					Skills       []scanned `json:"skills"`
				}{scan.RulesVersion, results}); err != nil {
					return err
				}
			default:
				a.printScan(a.stdout, results)
			}
			if threshold != "none" {
				for _, r := range results {
					if r.Verdict.Rank() >= threshold.Rank() {
						return &exitError{code: exitInvalid}
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output: text, json or sarif")
	cmd.Flags().StringVar(&failOn, "fail-on", "high", "exit 1 when a finding is at least this severe: low, medium, high or none")
	return cmd
}

func (a *app) printScan(w io.Writer, results []scanned) {
	counts := map[scan.Severity]int{}
	for _, r := range results {
		counts[r.Verdict]++
		if r.Verdict == scan.Clean {
			if !a.quiet {
				fmt.Fprintf(w, "%-7s %s (%s)\n", r.Verdict, inert(r.Name), inert(r.Dir))
			}
			continue
		}
		fmt.Fprintf(w, "%-7s %s (%s): %d findings\n", r.Verdict, inert(r.Name), inert(r.Dir), len(r.Findings))
		for _, f := range r.Findings {
			where := f.File
			if f.Line > 0 {
				where = fmt.Sprintf("%s:%d", f.File, f.Line)
			}
			fmt.Fprintf(w, "  %-7s %-36s %s  %s\n", f.Severity, f.Rule, inert(where), inert(f.Message))
		}
	}
	if !a.quiet {
		fmt.Fprintf(w, "%d skills scanned: %d high, %d medium, %d low, %d clean\n",
			len(results), counts[scan.High], counts[scan.Medium], counts[scan.Low], counts[scan.Clean])
	}
}

// scanFolders finds the skill folders under arg: arg itself when it holds a
// SKILL.md (or is one), else the folders skillmd.FindFolders names among
// its files, the rule the library index applies.
func scanFolders(arg string) ([]string, error) {
	if filepath.Base(arg) == skillmd.SkillFile && isFile(arg) {
		return []string{filepath.Dir(arg)}, nil
	}
	if isFile(filepath.Join(arg, skillmd.SkillFile)) {
		return []string{arg}, nil
	}
	var rels []string
	err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != arg && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		// Only <skill>/SKILL.md and <category>/<skill>/SKILL.md count:
		// nothing below the third level needs listing.
		rel, err := filepath.Rel(arg, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.Count(rel, "/") >= 2 {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == skillmd.SkillFile {
			rels = append(rels, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(rels)
	folders, _ := skillmd.FindFolders(len(rels), func(i int) string { return rels[i] }, maxLibrarySkills+1)
	if len(folders) > maxLibrarySkills {
		return nil, fmt.Errorf("%s holds more than %d skills", arg, maxLibrarySkills)
	}
	if len(folders) == 0 {
		return nil, fmt.Errorf("%s: no SKILL.md in it, nor in a folder (or category folder) below it", arg)
	}
	var dirs []string
	for _, f := range folders {
		dirs = append(dirs, filepath.Join(arg, filepath.FromSlash(f.Dir)))
	}
	return dirs, nil
}

// readScanFiles reads a skill folder's files for scan.Skill: as push would
// send them (readSkillDir), at most one past the default limits, so the
// scan reports an oversized folder as incomplete instead of reading it all.
func readScanFiles(cmd *cobra.Command, dir string) ([]scan.File, error) {
	s, err := readSkillDir(cmd.Context(), dir)
	if err != nil {
		return nil, err
	}
	var files []scan.File
	var total int64
	for _, f := range s.Files {
		if total > scan.DefaultLimits.MaxBytes || len(files) > scan.DefaultLimits.MaxFiles {
			break
		}
		b, err := readHead(f.Abs, scan.DefaultLimits.MaxBytes-total+1)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed while scanning
			}
			return nil, err
		}
		total += int64(len(b))
		files = append(files, scan.File{Path: f.Rel, Data: b, Executable: f.Exec})
	}
	return files, nil
}
