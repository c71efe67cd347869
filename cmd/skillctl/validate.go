package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// validation is one skill folder's result, as --json prints it.
type validation struct {
	Dir      string            `json:"dir"`
	Name     string            `json:"name"`
	Valid    bool              `json:"valid"`
	Files    int               `json:"files"`
	Bytes    int64             `json:"bytes"`
	Problems []json.RawMessage `json:"problems"`
	// Coexistence says whether the server compared the skill with its
	// library's others: "checked", else why not.
	Coexistence string `json:"coexistence"`
}

func (a *app) validateCmd() *cobra.Command {
	var offline bool
	var category string
	cmd := &cobra.Command{
		Use:   "validate DIR...",
		Short: "Check skill folders offline with the server's publishing rules",
		Long: `validate checks each skill folder with the rules the server applies before it publishes
one, without a server: SKILL.md exists and opens with YAML frontmatter; the folder's name is a skill
name (at most 64 lowercase letters, digits and single hyphens) and the frontmatter name equals it;
description is set; paths are canonical, with no SKILL.md nested inside; at most 512 files and
16 MiB; only regular files (no symlinks). Warnings (lengths over the Agent Skills limits, fields of
the wrong type) do not fail it.

DIR is a skill folder (it holds SKILL.md; naming the SKILL.md will do) or a library: every
folder below it holding a SKILL.md, or one level further down under a category folder, is checked.
Files and folders whose names start with "." are ignored, as push ignores them.

With a server named (--target, SKILLCTL_TARGET or a config context) and without --offline,
each valid folder is also sent to it to validate without publishing (to --library, at
--category): its warnings add the skills of that library the folder would compete with (rule
"coexistence": its description or eval queries retrieve another skill first, or it nearly
duplicates one). Whether a folder is valid stays the rules above. Otherwise, or when the server
would refuse the folder there, validate says it did not check coexistence.

Exit code 0 when every skill is valid, 1 when any has errors, 2 when a folder cannot be read.`,
		Example: `  skillctl validate ./pdf
  skillctl validate --json ./library   # every skill of a library, as JSON
  skillctl validate ./pdf --target skills.example.com:443 --tls --library shared`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var results []validation
			invalid := false
			online, why := false, "not checked: offline (--offline)"
			if !offline {
				why = "not checked: no server named (--target, SKILLCTL_TARGET or a config context)"
				// The folder check needs no settings: a bad config only
				// leaves coexistence unchecked.
				if err := a.connect(cmd); err != nil {
					why = "not checked: " + err.Error()
				} else {
					online = a.set.TargetSet
				}
			}
			for _, arg := range args {
				dirs, err := findSkills(arg)
				if err != nil {
					return usageErr(err)
				}
				for _, dir := range dirs {
					s, err := readSkillDir(cmd.Context(), dir)
					if err != nil {
						return usageErr(err)
					}
					ps, err := checkLocal(s)
					if err != nil {
						return usageErr(err)
					}
					r := validation{Dir: dir, Name: s.Name, Valid: !hasErrors(ps), Files: len(s.Files), Bytes: s.TotalBytes, Problems: []json.RawMessage{}, Coexistence: why}
					switch {
					case !r.Valid:
						r.Coexistence = "not checked: the folder is invalid"
					case online:
						more, err := a.validateOnServer(cmd.Context(), s, categoryOf(arg, dir, category), ps)
						if err != nil {
							r.Coexistence = "not checked: " + err.Error()
							break
						}
						ps, r.Coexistence = append(ps, more...), "checked"
					}
					for _, p := range ps {
						b, err := protojson.Marshal(p)
						if err != nil {
							return err
						}
						r.Problems = append(r.Problems, b)
					}
					invalid = invalid || !r.Valid
					results = append(results, r)
					if !a.jsonOut {
						a.printValidation(r, ps)
					}
				}
			}
			if a.jsonOut {
				enc := json.NewEncoder(a.jsonStdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Valid  bool         `json:"valid"`
					Skills []validation `json:"skills"`
				}{!invalid, results}); err != nil {
					return err
				}
			}
			if invalid {
				return &exitError{code: exitInvalid}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&offline, "offline", false, "check only the folder, without asking the server about coexistence")
	cmd.Flags().StringVar(&category, "category", "", "the category the folder would be pushed to, for the server's check (a library's category folders name their own)")
	return cmd
}

// validateOnServer sends a valid folder to the server to validate without
// publishing at category, and returns its coexistence warnings. The
// folder's validity stays the local rules' (what else the server would
// refuse depends on where it is pushed): a folder the server would refuse
// is not checked, and says why.
func (a *app) validateOnServer(ctx context.Context, s localSkill, category string, ps []*skillsvcv1.SkillProblem) ([]*skillsvcv1.SkillProblem, error) {
	ctx, cancel, err := a.callCtx(ctx, true)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := a.publish(ctx, s, &skillsvcv1.PublishSkillHeader{Library: a.libraryRef(), Category: category, Name: s.Name, ValidateOnly: true}, nil)
	if err != nil {
		if st, ok := status.FromError(err); ok {
			return nil, fmt.Errorf("the server answered %s: %s", st.Code(), st.Message())
		}
		return nil, err
	}
	var more, refused []*skillsvcv1.SkillProblem
	for _, p := range resp.GetProblems() {
		switch {
		case p.GetSeverity() == skillsvcv1.SkillProblem_SEVERITY_ERROR:
			refused = append(refused, p)
		case p.GetRule() == coexistenceRule:
			more = append(more, p)
		}
	}
	if !resp.GetValid() && len(refused) > 0 {
		return nil, fmt.Errorf("the server would refuse it there (%s): %s", refused[0].GetRule(), refused[0].GetMessage())
	}
	return more, nil
}

// coexistenceRule is the rule of the server's coexistence warnings
// (library.RuleCoexistence).
const coexistenceRule = "coexistence"

// categoryOf is the category a skill folder dir found under arg is pushed
// to: the folder above it when arg is a library holding it under a
// category folder, else the --category flag.
func categoryOf(arg, dir, flag string) string {
	arg, dir = filepath.Clean(arg), filepath.Clean(dir)
	if filepath.Base(arg) == "SKILL.md" {
		arg = filepath.Dir(arg) // the file named instead of its folder
	}
	if parent := filepath.Dir(dir); dir != arg && parent != arg {
		return filepath.Base(parent)
	}
	return flag
}

func (a *app) printValidation(r validation, ps []*skillsvcv1.SkillProblem) {
	switch {
	case !r.Valid:
		fmt.Fprintf(a.stdout, "invalid  %s (%s)\n", inert(r.Name), inert(r.Dir))
	case a.quiet:
		return
	default:
		fmt.Fprintf(a.stdout, "valid    %s (%d files, %s)\n", inert(r.Name), r.Files, humanBytes(r.Bytes))
	}
	printProblems(a.stdout, "", ps)
	if r.Coexistence != "checked" && r.Valid && !a.quiet {
		fmt.Fprintf(a.stdout, "  coexistence %s\n", inert(r.Coexistence))
	}
}
