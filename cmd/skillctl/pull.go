package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillrun"
)

// What pull unpacks at most: the server's default --skills.max-export-bytes.
const defaultMaxPullBytes = 256 << 20

func (a *app) pullCmd() *cobra.Command {
	var version string
	var force bool
	var maxBytes int64
	cmd := &cobra.Command{
		Use:   "pull NAME DIR",
		Short: "Download a skill (or one of its versions) into a folder",
		Long: `pull exports the skill NAME (a name or its path, e.g. docs/pdf) and unpacks it into DIR, which
becomes the skill folder: DIR/SKILL.md, DIR/scripts/..., so "skillctl push DIR" publishes it back.
DIR must not exist or be empty, unless --force (which overwrites files, never deletes).

The archive is checked as it is unpacked: no absolute paths or "..", only files and folders (no
links or devices), at most --max-bytes in total. Each file gets the mode the server recorded for it
(0644 or 0755: as pushed or uploaded, else 0755 only for a file that starts with "#!").`,
		Example: `  skillctl pull pdf ./pdf
  skillctl pull pdf ./pdf-prod --version production`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTarget(args[1], force); err != nil {
				return usageErr(err)
			}
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			stream, err := a.skills().ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: args[0], Version: version})
			if err != nil {
				return err
			}
			// Read the first message before touching DIR, so a skill that
			// does not exist leaves nothing behind.
			first, err := stream.Recv()
			if err != nil {
				return err
			}
			bar := a.progress(-1, "pull "+args[0])
			r := &skillrun.ExportReader{Recv: stream.Recv, Buf: first.GetData()}
			if bar != nil {
				r.OnRead = func(n int) { bar.Add(n) }
			}
			n, files, err := skillrun.ExtractSkill(r, args[1], maxBytes)
			if bar != nil {
				bar.Finish()
			}
			if r.Err != nil {
				return r.Err // the server's status, not what the unpacker made of it
			}
			if err != nil {
				return usageErr(err)
			}
			if !a.quiet {
				fmt.Fprintf(a.stdout, "pulled %s into %s (%d files, %s)\n", inert(args[0]), inert(args[1]), files, humanBytes(n))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "a version id, unique prefix or label instead of the live copy")
	cmd.Flags().BoolVar(&force, "force", false, "unpack into a folder that is not empty, overwriting files")
	cmd.Flags().Int64Var(&maxBytes, "max-bytes", defaultMaxPullBytes, "refuse an archive unpacking to more than this")
	return cmd
}

// checkTarget refuses a DIR that exists and holds something, unless force.
func checkTarget(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0 && !force:
		return fmt.Errorf("%s is not empty (--force overwrites its files)", dir)
	}
	return nil
}
