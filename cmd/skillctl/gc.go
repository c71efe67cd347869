package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

func (a *app) gcCmd() *cobra.Command {
	var shared, dry bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Delete a library's unreferenced blobs and expired pins (admins)",
		Long: `gc asks the server (AdminService.CollectLibraryGarbage) to delete the blobs of a library that no
published version and no pinned thread's snapshot refers to and that are older than the server's
--library.gc-grace, after sweeping the user's expired pins and unreferenced snapshots. The library is
--library's (a user ID, "shared" or "team:ID"), --shared, or else --user's.`,
		Example: `  skillctl gc --shared --dry-run
  skillctl gc --library alice
  skillctl gc --library team:legal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.connect(cmd); err != nil {
				return err
			}
			ref := a.libraryRef()
			switch {
			case shared:
				ref = &skillsvcv1.LibraryRef{Shared: true}
			case ref == nil && a.set.User != "":
				ref = &skillsvcv1.LibraryRef{User: a.set.User}
			case ref == nil:
				return usageErr(fmt.Errorf("gc needs a library: --shared, --library or --user"))
			}
			ctx, cancel, err := a.callCtx(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer cancel()
			resp, err := skillsvcv1.NewAdminServiceClient(a.conn).CollectLibraryGarbage(ctx, &skillsvcv1.CollectLibraryGarbageRequest{Library: ref, DryRun: dry})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			verb := "deleted"
			if dry {
				verb = "would delete"
			}
			fmt.Fprintf(a.stdout, "%s %d blobs (%s), %d snapshots, %d pins; kept %d blobs\n",
				verb, resp.GetBlobsDeleted(), humanBytes(resp.GetBytesFreed()), resp.GetSnapshotsDeleted(), resp.GetPinsDeleted(), resp.GetBlobsKept())
			if u := resp.GetUnreadableRecords(); len(u) > 0 {
				// No blob is deleted while a record cannot be read.
				fmt.Fprintf(a.stdout, "unreadable version records (no blob deleted; remove them with skillctl admin delete-versions): %s\n", strings.Join(u, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&shared, "shared", false, "collect the shared library")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "delete nothing; report what would go")
	return cmd
}
