package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// maxVersionPages bounds versions' paging.
const maxVersionPages = 1000

func (a *app) versionsCmd() *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "versions NAME",
		Short: "List a skill's versions, newest first",
		Long: `versions lists the published (and, for their author and admins, pending and rejected)
versions of skill NAME in the --library: id (a unique prefix of 12 hex digits names it anywhere),
when and by whom it was published, size, state, labels and note; then the warnings each publish
found, such as the skills of the library it competes with (rule "coexistence"), for reviewers. --json prints one
ListSkillVersionsResponse holding every page.`,
		Example: `  skillctl versions pdf
  skillctl versions pdf --state pending --library shared`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			var st skillsvcv1.VersionState
			switch state {
			case "":
			case "published":
				st = skillsvcv1.VersionState_VERSION_STATE_PUBLISHED
			case "pending":
				st = skillsvcv1.VersionState_VERSION_STATE_PENDING
			case "rejected":
				st = skillsvcv1.VersionState_VERSION_STATE_REJECTED
			default:
				return usageErr(fmt.Errorf("--state %q: want published, pending or rejected", state))
			}
			if err := a.connect(cmd); err != nil {
				return err
			}
			req := &skillsvcv1.ListSkillVersionsRequest{Library: a.libraryRef(), Name: args[0], State: st, PageSize: 100}
			out := &skillsvcv1.ListSkillVersionsResponse{}
			for page := 0; ; page++ {
				if page == maxVersionPages {
					return fmt.Errorf("more than %d pages of versions", maxVersionPages)
				}
				ctx, cancel, err := a.callCtx(cmd.Context(), true)
				if err != nil {
					return err
				}
				resp, err := a.library().ListSkillVersions(ctx, req)
				cancel()
				if err != nil {
					return err
				}
				out.Versions = append(out.Versions, resp.GetVersions()...)
				out.Labels = resp.GetLabels()
				if resp.GetNextPageToken() == "" {
					break
				}
				req.PageToken = resp.GetNextPageToken()
			}
			if a.jsonOut {
				return a.printJSON(out)
			}
			if a.quiet {
				for _, v := range out.GetVersions() {
					fmt.Fprintln(a.stdout, inert(v.GetId()))
				}
				return nil
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "VERSION\tCREATED\tAUTHOR\tFILES\tSIZE\tSTATE\tLABELS\tMESSAGE")
			for _, v := range out.GetVersions() {
				created := "-"
				if t := v.GetCreateTime(); t != nil {
					created = t.AsTime().UTC().Format("2006-01-02 15:04:05")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", inert(shortID(v.GetId())), created, dash(v.GetAuthor()), v.GetFileCount(),
					humanBytes(v.GetTotalBytes()), stateName(v.GetState()), dash(strings.Join(v.GetLabels(), ",")), oneLine(v.GetMessage(), 50))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			// What the publish found (skills it competes with among it),
			// for a reviewer deciding on a pending version.
			for _, v := range out.GetVersions() {
				if len(v.GetProblems()) > 0 {
					fmt.Fprintf(a.stdout, "\n%s %s:\n", inert(shortID(v.GetId())), stateName(v.GetState()))
					printProblems(a.stdout, "", v.GetProblems())
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only versions in this state: published, pending or rejected")
	return cmd
}

func stateName(s skillsvcv1.VersionState) string {
	switch s {
	case skillsvcv1.VersionState_VERSION_STATE_PUBLISHED:
		return "published"
	case skillsvcv1.VersionState_VERSION_STATE_PENDING:
		return "pending"
	case skillsvcv1.VersionState_VERSION_STATE_REJECTED:
		return "rejected"
	}
	return "-"
}

// printVersion prints the outcome of a call about one version.
func (a *app) printVersion(verb string, v *skillsvcv1.SkillVersion, removed []string) {
	if a.quiet {
		fmt.Fprintln(a.stdout, inert(v.GetId()))
		return
	}
	fmt.Fprintf(a.stdout, "%s %s version %s", inert(verb), inert(v.GetName()), inert(v.GetId()))
	if labels := v.GetLabels(); len(labels) > 0 {
		sort.Strings(labels)
		fmt.Fprintf(a.stdout, " [%s]", inert(strings.Join(labels, ", ")))
	}
	fmt.Fprintln(a.stdout)
	if len(removed) > 0 {
		fmt.Fprintf(a.stdout, "removed: %s\n", inert(strings.Join(removed, ", ")))
	}
}

func (a *app) labelCmd() *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "label NAME VERSION LABEL | label --remove NAME LABEL",
		Short: "Point a label at a version of a skill, or remove it",
		Long: `label points LABEL (letters, digits, '.', '_', '-', starting with a letter) at VERSION (an id,
a unique prefix of one, or another label) of skill NAME, e.g. to mark what production pins.
"latest" is moved only by push, rollback and approve. --remove deletes the label.`,
		Example: `  skillctl label pdf sha256:3f2a9c1b7d4e production
  skillctl label pdf latest production
  skillctl label --remove pdf production`,
		Args: func(cmd *cobra.Command, args []string) error {
			if remove {
				return cobra.ExactArgs(2)(cmd, args)
			}
			return cobra.ExactArgs(3)(cmd, args)
		},
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &skillsvcv1.SetSkillLabelRequest{Name: args[0]}
			if remove {
				req.Label = args[1]
			} else {
				req.Version, req.Label = args[1], args[2]
			}
			if err := a.connect(cmd); err != nil {
				return err
			}
			req.Library = a.libraryRef()
			ctx, cancel, err := a.callCtx(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.library().SetSkillLabel(ctx, req)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			if remove {
				if !a.quiet {
					fmt.Fprintf(a.stdout, "removed label %s of %s\n", inert(req.Label), inert(req.Name))
				}
				return nil
			}
			a.printVersion("labelled "+req.Label+":", resp.GetVersion(), nil)
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the label")
	return cmd
}

func (a *app) rollbackCmd() *cobra.Command {
	var ifLatest string
	cmd := &cobra.Command{
		Use:   "rollback NAME VERSION",
		Short: "Publish an earlier version again as the live copy",
		Long: `rollback publishes VERSION (an id, a unique prefix or a label) of skill NAME as its live copy
and moves "latest" to it. Files the current copy has and VERSION lacks are removed.`,
		Example:           `  skillctl rollback pdf sha256:3f2a9c1b7d4e`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.library().RollbackSkill(ctx, &skillsvcv1.RollbackSkillRequest{
				Library: a.libraryRef(), Name: args[0], Version: args[1], IfLatest: ifLatest,
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			a.printVersion("rolled back", resp.GetVersion(), resp.GetRemovedFiles())
			return nil
		},
	}
	cmd.Flags().StringVar(&ifLatest, "if-latest", "", `roll back only while "latest" is this version`)
	return cmd
}

func (a *app) reviewCmd(approve bool) *cobra.Command {
	var comment string
	use, short, verb := "reject NAME VERSION", "Reject a pending version (admins)", "rejected"
	if approve {
		use, short, verb = "approve NAME VERSION", "Approve a pending version and publish it (admins)", "approved"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `. With review on (--library.review on the server), a non-admin's push to the
shared library is pending until an admin approves or rejects it; the decision and the comment are
kept with the version and in the audit log. List pending versions with
"skillctl versions NAME --state pending --library shared".`,
		Example:           "  skillctl " + strings.Fields(use)[0] + " pdf sha256:3f2a9c1b7d4e --library shared -c \"looks good\"",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.library().ReviewSkillVersion(ctx, &skillsvcv1.ReviewSkillVersionRequest{
				Library: a.libraryRef(), Name: args[0], Version: args[1], Approve: approve, Comment: comment,
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			a.printVersion(verb, resp.GetVersion(), resp.GetRemovedFiles())
			return nil
		},
	}
	cmd.Flags().StringVarP(&comment, "comment", "c", "", "why, kept with the version and in the audit log")
	return cmd
}

func (a *app) rmCmd() *cobra.Command {
	var ifLatest string
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Delete a skill's files from the library (its versions are kept)",
		Long: `rm removes every file of skill NAME from the --library. Its versions stay, so
"skillctl rollback NAME VERSION" brings it back.`,
		Example:           `  skillctl rm pdf`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := a.library().DeleteSkill(ctx, &skillsvcv1.DeleteSkillRequest{Library: a.libraryRef(), Name: args[0], IfLatest: ifLatest})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			if !a.quiet {
				fmt.Fprintf(a.stdout, "deleted %s (%d files)\n", inert(args[0]), resp.GetRemovedFiles())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ifLatest, "if-latest", "", `delete only while "latest" is this version`)
	return cmd
}
