package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillrun"
)

// What pull unpacks at most: the server's default --skills.max-export-bytes.
const defaultMaxPullBytes = 256 << 20

// setHelp is what pull and sync say about a set pull.
const setHelp = `With --all, --category, --layer or --scope and one argument DIR, pull copies a set of skills of
your catalog (what "skillctl ls" lists, through the scope if any) into DIR, one folder per skill:
  --layout flat (default)    DIR/<skill>/SKILL.md: what .claude/skills, ~/.agents/skills and
                             ~/.codex/skills expect
  --layout categories        DIR/<category>/<skill>/SKILL.md (a flat skill: DIR/<skill>)
--layer takes only the skills your catalog serves from that library: user (your own), team (any of
your teams'), team:ID, or shared (the organization's). Two skills that would land in the same
folder (the same name in two categories, in the flat layout) are an error before anything is
written. Skills over the manifest limits (512 files, 16 MiB) are skipped with a warning: their files
cannot be verified.

DIR/` + lockName + ` (JSON) records the server, the library digest, and each folder written with its
skill's manifest digest and every file's size, sha256 and mode. A later pull into DIR exports only
skills whose manifest digest changed (or whose folder is missing); folders edited since they were
pulled are kept when their skill did not change, and refused (an error before anything is written)
when it did, unless --force. A folder in DIR that no pull wrote is never touched: a skill that would
land there is an error, unless --force (which replaces it). Each skill is unpacked into a
temporary folder in DIR, every file checked against the listing's manifest (size and sha256, no
file more or less), and only then renamed into place. A pull holds an exclusive lock on
DIR/` + dirLockName + ` (holding its pid) while it reads and writes DIR: another pull into DIR waits
for it up to --wait, then fails naming its pid. Each file gets the mode of its tar entry in
the export (0755 when executable, else 0644): the mode the server recorded for it. --json prints
what was done: folders fetched, unchanged, removed and kept, and the exports made with the bytes
they returned.`

func (a *app) pullCmd() *cobra.Command {
	var version string
	var force bool
	var maxBytes int64
	var o setOptions
	var category string
	cmd := &cobra.Command{
		Use:   "pull NAME DIR | pull (--all | --category CAT | --layer LAYER | --scope SCOPE) DIR",
		Short: "Download a skill, or a set of skills, into a folder",
		Long: `pull NAME DIR exports the skill NAME (a name or its path, e.g. docs/pdf) and unpacks it into DIR,
which becomes the skill folder: DIR/SKILL.md, DIR/scripts/..., so "skillctl push DIR" publishes it
back. DIR must not exist or be empty, unless --force (which overwrites files, never deletes).

` + setHelp + `

--sync also removes the folders an earlier pull wrote whose skills are no longer selected (deleted
upstream, disabled, out of the scope): "skillctl sync DIR" does the same.

The archive is checked as it is unpacked: no absolute paths or "..", only files and folders (no
links or devices), at most --max-bytes in total. Each file gets the mode the server recorded for it
(0644 or 0755: as pushed or uploaded, else 0755 only for a file that starts with "#!").`,
		Example: `  skillctl pull pdf ./pdf
  skillctl pull pdf ./pdf-prod --version production
  skillctl pull --all ~/.claude/skills                       # every skill you see, flat
  skillctl pull --category docs --layout categories ./skills
  skillctl pull --scope contracts ~/.agents/skills             # a scope's skills
  skillctl pull --all ~/.codex/skills --sync --dry-run       # what a sync would do`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.force = force
			if cmd.Flags().Changed("category") {
				o.sel.Category = proto.String(category)
			}
			o.sel.Scope, o.sel.Harness, o.maxBytes = a.viewScope, a.harness, maxBytes
			if len(args) == 1 {
				if o.sel.empty() {
					return usageErr(errors.New("pull takes NAME DIR, or one of --all, --category, --layer, --scope and DIR"))
				}
				if version != "" {
					return usageErr(errors.New("--version pulls one skill: pull NAME DIR --version V"))
				}
				return a.pullSet(cmd, args[0], o)
			}
			if o.sel.All || o.sel.Category != nil || o.sel.Layer != "" || o.sync || o.dryRun || cmd.Flags().Changed("layout") {
				return usageErr(errors.New("--all, --category, --layer, --layout, --sync and --dry-run pull a set of skills into one DIR: pull --all DIR"))
			}
			return a.pullOne(cmd, args[0], args[1], version, force, maxBytes)
		},
	}
	f := cmd.Flags()
	f.StringVar(&version, "version", "", "a version id, unique prefix or label instead of the live copy (one skill)")
	f.BoolVar(&force, "force", false, "one skill: unpack into a folder that is not empty, overwriting files; a set: replace folders no pull wrote, or edited since")
	f.Int64Var(&maxBytes, "max-bytes", defaultMaxPullBytes, "refuse an archive unpacking to more than this (per skill)")
	a.setFlags(cmd, &o, &category)
	f.BoolVar(&o.sync, "sync", false, "also remove the folders an earlier pull wrote whose skills are no longer selected")
	return cmd
}

// setFlags are the flags of a set pull, shared by pull and sync.
func (a *app) setFlags(cmd *cobra.Command, o *setOptions, category *string) {
	f := cmd.Flags()
	f.BoolVar(&o.sel.All, "all", false, "every skill of your catalog (through --scope, if given)")
	f.StringVar(category, "category", "", `only the skills of this category ("" for flat skills)`)
	f.StringVar(&o.sel.Layer, "layer", "", "only the skills served from this library: user, team, team:ID or shared")
	f.StringVar(&o.layout, "layout", layoutFlat, "flat (DIR/<skill>) or categories (DIR/<category>/<skill>)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be fetched and removed; write nothing")
	f.DurationVar(&o.wait, "wait", defaultPullWait, "how long to wait for another pull or sync into DIR to finish (0: fail at once)")
}

func (a *app) syncCmd() *cobra.Command {
	var o setOptions
	var category string
	var maxBytes int64
	cmd := &cobra.Command{
		Use:   "sync DIR",
		Short: "Bring a folder of pulled skills up to date, removing skills deleted upstream",
		Long: `sync DIR is "pull --sync": it pulls the selected skills into DIR as a set pull does, then removes
the folders an earlier pull wrote (those DIR/` + lockName + ` names) whose skills are no longer
selected: deleted upstream, disabled, or out of the scope. With no --all, --category, --layer or
--scope it repeats the selection (and layout, scope and harness) DIR/` + lockName + ` recorded.
Folders no pull wrote are never touched; folders edited since they were pulled are not removed or
replaced unless --force. sync refuses a lockfile written from another server unless --force.

` + setHelp,
		Example: `  skillctl pull --all ~/.claude/skills && skillctl sync ~/.claude/skills
  skillctl sync ~/.agents/skills --dry-run
  skillctl sync ./skills --category docs --layout categories`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("category") {
				o.sel.Category = proto.String(category)
			}
			o.sel.Scope, o.sel.Harness, o.maxBytes, o.sync = a.viewScope, a.harness, maxBytes, true
			return a.pullSet(cmd, args[0], o)
		},
	}
	a.setFlags(cmd, &o, &category)
	cmd.Flags().BoolVar(&o.force, "force", false, "replace or remove folders edited since they were pulled, replace folders no pull wrote, sync a lockfile of another server")
	cmd.Flags().Int64Var(&maxBytes, "max-bytes", defaultMaxPullBytes, "refuse an archive unpacking to more than this (per skill)")
	return cmd
}

// pullOne is pull NAME DIR.
func (a *app) pullOne(cmd *cobra.Command, name, dir, version string, force bool, maxBytes int64) error {
	if err := checkTarget(dir, force); err != nil {
		return usageErr(err)
	}
	ctx, cancel, err := a.open(cmd, true)
	if err != nil {
		return err
	}
	defer cancel()
	stream, err := a.skills().ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: name, Version: version})
	if err != nil {
		return err
	}
	// Read the first message before touching DIR, so a skill that
	// does not exist leaves nothing behind.
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	bar := a.progress(-1, "pull "+name)
	r := &skillrun.ExportReader{Recv: stream.Recv, Buf: first.GetData()}
	if bar != nil {
		r.OnRead = func(n int) { bar.Add(n) }
	}
	n, files, err := skillrun.ExtractSkill(r, dir, maxBytes)
	if bar != nil {
		bar.Finish()
	}
	if r.Err != nil {
		return r.Err // the server's status, not what the unpacker made of it
	}
	if errors.As(err, new(*skillrun.ArchiveTooLargeError)) {
		return usageErr(fmt.Errorf("%w (--max-bytes)", err))
	}
	if err != nil {
		return usageErr(err)
	}
	if !a.quiet {
		fmt.Fprintf(a.stdout, "pulled %s into %s (%d files, %s)\n", inert(name), inert(dir), files, humanBytes(n))
	}
	return nil
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
