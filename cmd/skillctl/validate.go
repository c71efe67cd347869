package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
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
}

func (a *app) validateCmd() *cobra.Command {
	return &cobra.Command{
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

Exit code 0 when every skill is valid, 1 when any has errors, 2 when a folder cannot be read.`,
		Example: `  skillctl validate ./pdf
  skillctl validate --json ./library   # every skill of a library, as JSON`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var results []validation
			invalid := false
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
					r := validation{Dir: dir, Name: s.Name, Valid: !hasErrors(ps), Files: len(s.Files), Bytes: s.TotalBytes, Problems: []json.RawMessage{}}
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
}
