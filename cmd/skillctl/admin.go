package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// maxAdminFileBytes bounds a file admin put sends: the server's gRPC
// message limit is 4 MiB.
const maxAdminFileBytes = 3 << 20

// adminCmd groups AdminService's operations on a library named by
// --library (shared, team:ID or a user ID): they need an admin token.
func (a *app) adminCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Operator calls (AdminService): protect skills, drop an index, put or delete a library file",
		Long: `admin runs AdminService's calls on the library --library names: "shared", "team:ID" (a team's
library) or a user ID. They need an admin token (any caller in insecure mode), and each is written
to the server's audit log.`,
	}
	cmd.AddCommand(a.protectCmd(true), a.protectCmd(false), a.protectedCmd(), a.dropIndexCmd(), a.adminPutCmd(), a.adminDeleteCmd(),
		a.deleteVersionsCmd(), a.rejectProposalsCmd())
	return cmd
}

// adminCall connects and runs f with an admin client and a call context,
// then prints resp as JSON when asked, else text.
func (a *app) adminCall(cmd *cobra.Command, needLibrary bool, f func(context.Context, skillsvcv1.AdminServiceClient) (proto.Message, string, error)) error {
	if err := a.connect(cmd); err != nil {
		return err
	}
	if needLibrary && a.libraryRef() == nil {
		return usageErr(errors.New(`--library is required: "shared", "team:ID" or a user ID`))
	}
	ctx, cancel, err := a.callCtx(cmd.Context(), true)
	if err != nil {
		return err
	}
	defer cancel()
	resp, text, err := f(ctx, skillsvcv1.NewAdminServiceClient(a.conn))
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(resp)
	}
	if !a.quiet && text != "" {
		fmt.Fprintln(a.stdout, text)
	}
	return nil
}

func (a *app) protectCmd(protect bool) *cobra.Command {
	use, short := "protect NAME", "Protect a skill of the shared library or a team's: no team's or user's namesake replaces it"
	if !protect {
		use, short = "unprotect NAME", "Stop protecting a skill"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  skillctl admin " + strings.Fields(use)[0] + " contracts --library shared\n  skillctl admin " + strings.Fields(use)[0] + " nda --library team:legal",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				r, err := c.SetSkillProtected(ctx, &skillsvcv1.SetSkillProtectedRequest{Library: a.libraryRef(), Name: args[0], Protected: protect})
				return r, "protected: " + inert(strings.Join(r.GetNames(), ", ")), err
			})
		},
	}
}

func (a *app) protectedCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "protected",
		Short: "List the protected skills of the shared library or a team's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				r, err := c.ListProtectedSkills(ctx, &skillsvcv1.ListProtectedSkillsRequest{Library: a.libraryRef()})
				names := make([]string, len(r.GetNames()))
				for i, n := range r.GetNames() {
					names[i] = inert(n)
				}
				return r, strings.Join(names, "\n"), err
			})
		},
	}
}

func (a *app) dropIndexCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "drop-index",
		Short: "Forget every cached copy of a library's index, after a bulk upload with S3 tools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				l := a.libraryRef()
				r, err := c.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{User: l.GetUser(), Shared: l.GetShared(), Team: l.GetTeam()})
				return r, "dropped", err
			})
		},
	}
}

func (a *app) adminPutCmd() *cobra.Command {
	var mustNotExist bool
	cmd := &cobra.Command{
		Use:     "put PATH FILE",
		Short:   "Store FILE at PATH (relative to the library's root) and drop the library's index",
		Example: "  skillctl admin put nda/SKILL.md ./nda/SKILL.md --library team:legal",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readBounded(args[1], maxAdminFileBytes)
			if err != nil {
				return usageErr(err)
			}
			// The file's executable bit is recorded with it.
			st, err := os.Stat(args[1])
			if err != nil {
				return usageErr(err)
			}
			mode := uint32(0o644)
			if st.Mode()&0o111 != 0 {
				mode = 0o755
			}
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				r, err := c.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{Library: a.libraryRef(), Path: args[0], Data: data, MustNotExist: mustNotExist, Mode: mode})
				return r, fmt.Sprintf("stored %s (%d bytes, etag %s)", inert(args[0]), r.GetSize(), inert(r.GetEtag())), err
			})
		},
	}
	cmd.Flags().BoolVar(&mustNotExist, "must-not-exist", false, "store only if PATH does not exist yet")
	return cmd
}

func (a *app) adminDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete PATH",
		Short: "Delete the file at PATH (relative to the library's root) and drop the library's index",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				r, err := c.DeleteLibraryFile(ctx, &skillsvcv1.DeleteLibraryFileRequest{Library: a.libraryRef(), Path: args[0]})
				return r, "deleted " + inert(args[0]), err
			})
		},
	}
}
