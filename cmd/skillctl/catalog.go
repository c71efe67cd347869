package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// maxListPages bounds ls: at the server's largest page this is far more
// skills than a library holds.
const maxListPages = 1000

func (a *app) lsCmd() *cobra.Command {
	var category string
	var all bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the skills of your catalog",
		Long: `ls lists the skills your catalog serves (your library over the shared one): name, category,
layer, whether you disabled it, problems and description. --all also lists invalid skills (with
their errors) and disabled ones. --json prints one ListSkillsResponse holding every page.`,
		Example: `  skillctl ls
  skillctl ls --category docs --all
  skillctl ls --json | jq -r '.skills[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.connect(cmd); err != nil {
				return err
			}
			req := &skillsvcv1.ListSkillsRequest{PageSize: 1000, IncludeInvalid: all, IncludeDisabled: all}
			if cmd.Flags().Changed("category") {
				req.Category = proto.String(category)
			}
			resp, err := a.listAll(cmd.Context(), req)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			if a.quiet {
				for _, s := range resp.GetSkills() {
					fmt.Fprintln(a.stdout, inert(s.GetName()))
				}
				return nil
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "NAME\tCATEGORY\tLAYER\tSTATE\tDESCRIPTION")
			for _, s := range resp.GetSkills() {
				state := "ok"
				switch {
				case len(s.GetErrors()) > 0:
					state = fmt.Sprintf("invalid (%d)", len(s.GetErrors()))
				case s.GetDisabled():
					state = "disabled"
				case len(s.GetWarnings()) > 0:
					state = fmt.Sprintf("warnings (%d)", len(s.GetWarnings()))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inert(s.GetName()), dash(s.GetCategory()), inert(s.GetLayer()), state, oneLine(s.GetDescription(), 70))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&category, "category", "", `only this category ("" for flat skills)`)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "also list invalid and disabled skills")
	return cmd
}

// listAll pages through ListSkills.
func (a *app) listAll(ctx context.Context, req *skillsvcv1.ListSkillsRequest) (*skillsvcv1.ListSkillsResponse, error) {
	out := &skillsvcv1.ListSkillsResponse{}
	for range maxListPages {
		cctx, cancel, err := a.callCtx(ctx, true)
		if err != nil {
			return nil, err
		}
		resp, err := a.skills().ListSkills(cctx, req)
		cancel()
		if err != nil {
			return nil, err
		}
		out.Skills = append(out.Skills, resp.GetSkills()...)
		out.LibraryDigest = resp.GetLibraryDigest()
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
	return nil, fmt.Errorf("more than %d pages of skills", maxListPages)
}

// dash is s for a table cell, inert; "-" when empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return inert(s)
}

func (a *app) showCmd() *cobra.Command {
	var version string
	var raw bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one skill: its frontmatter, files and problems",
		Long: `show prints a skill (by name, or its path such as docs/pdf): where it lives, its frontmatter
fields, its manifest digest, problems and files. --raw prints SKILL.md as stored (control
characters escaped, as in all output; pull writes its exact bytes); --json the server's GetSkillResponse. --version shows a published version instead of the live copy.`,
		Example: `  skillctl show pdf
  skillctl show pdf --version production --raw`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.skills().GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: args[0], Version: version})
			if err != nil {
				return err
			}
			switch {
			case a.jsonOut:
				return a.printJSON(resp)
			case raw:
				_, err := fmt.Fprint(a.stdout, resp.GetRaw())
				return err
			}
			s := resp.GetSkill()
			tw := newTable(a.stdout)
			row := func(k, v string) {
				if v != "" {
					fmt.Fprintf(tw, "%s:\t%s\n", inert(k), inert(v))
				}
			}
			row("Name", s.GetName())
			row("Display name", s.GetDisplayName())
			row("Path", s.GetPath())
			row("Category", s.GetCategory())
			row("Layer", s.GetLayer())
			row("Description", oneLine(s.GetDescription(), 200))
			row("Version", s.GetVersion())
			row("License", s.GetLicense())
			row("Compatibility", s.GetCompatibility())
			row("Allowed tools", strings.Join(s.GetAllowedTools(), " "))
			for _, k := range sortedKeys(s.GetMetadata()) {
				row("Metadata "+k, s.GetMetadata()[k])
			}
			row("Digest", s.GetManifestDigest())
			if s.GetDisabled() {
				row("Disabled", "yes")
			}
			for _, e := range s.GetErrors() {
				row("Error", e)
			}
			for _, w := range s.GetWarnings() {
				row("Warning", w)
			}
			if m := s.GetManifest(); m != nil {
				row("Size", fmt.Sprintf("%d files, %s", m.GetFileCount(), humanBytes(m.GetTotalBytes())))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(resp.GetFiles()) > 0 {
				fmt.Fprintln(a.stdout, "Files:")
				for _, f := range resp.GetFiles() {
					fmt.Fprintf(a.stdout, "  %s (%s)\n", inert(f.GetPath()), humanBytes(f.GetSize()))
				}
				if n := resp.GetFilesOmitted(); n > 0 {
					fmt.Fprintf(a.stdout, "  … and %d more\n", n)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "a version id, unique prefix or label instead of the live copy")
	cmd.Flags().BoolVar(&raw, "raw", false, "print SKILL.md as stored (control characters escaped; pull writes exact bytes)")
	return cmd
}

func (a *app) renderCmd() *cobra.Command {
	var version, baseDir string
	cmd := &cobra.Command{
		Use:   "render NAME [ARGS...]",
		Short: "Print the text a model is given when the skill is invoked",
		Long: `render prints what the server hands the model when the skill NAME is invoked with ARGS
(joined by spaces): the base directory line, then the body with $ARGUMENTS replaced.`,
		Example: `  skillctl render pdf report.pdf
  skillctl render pdf --base-dir /sandbox/skills/pdf report.pdf`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.skills().RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{
				Path: args[0], Arguments: strings.Join(args[1:], " "), BaseDir: baseDir, Version: version,
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			text := resp.GetText()
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			_, err = fmt.Fprint(a.stdout, text)
			return err
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "a version id, unique prefix or label instead of the live copy")
	cmd.Flags().StringVar(&baseDir, "base-dir", "", "the base directory the text names, instead of /skills/<path>")
	return cmd
}

func (a *app) enableCmd(enable bool) *cobra.Command {
	use, short := "disable NAME", "Hide a skill from your catalog (for your user only)"
	if enable {
		use, short = "enable NAME", "Show a skill you disabled again"
	}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Long:              short + ". The skill's files are untouched; the setting is your user's, across threads.",
		Example:           "  skillctl " + strings.Fields(use)[0] + " pdf",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.skills().SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: args[0], Enabled: enable})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			if !a.quiet {
				word := "disabled"
				if enable {
					word = "enabled"
				}
				fmt.Fprintf(a.stdout, "%s %s\n", word, inert(resp.GetSkill().GetName()))
			}
			return nil
		},
	}
}

// completeSkillNames completes a NAME argument from the catalog, within a
// short deadline: completion must never hang a shell.
func (a *app) completeSkillNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	if a.connect(cmd) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
	defer cancel()
	resp, err := a.listAll(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 1000, IncludeDisabled: true})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, s := range resp.GetSkills() {
		if strings.HasPrefix(s.GetName(), toComplete) {
			names = append(names, inert(s.GetName())+"\t"+oneLine(s.GetDescription(), 60))
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
