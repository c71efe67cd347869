package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// chunkSize is how much of a file one PublishSkill message carries: well
// under gRPC's default 4 MiB message limit.
const chunkSize = 256 << 10

type pushOptions struct {
	category, message, ifLatest string
	labels                      []string
	dryRun, skipLocalCheck      bool
}

func (a *app) pushCmd() *cobra.Command {
	var o pushOptions
	cmd := &cobra.Command{
		Use:   "push DIR",
		Short: "Publish a skill folder as a new version",
		Long: `push validates the skill folder DIR with the publishing rules (as validate does) and
uploads it to the server, which validates it again and publishes it as an immutable version with
the label "latest" (and any --label). The skill's name is the folder's name. Files and folders
whose names start with "." (.git, .DS_Store) are not sent; symlinks are refused; a folder over
512 files or 16 MiB is refused before anything is sent.

It prints the version id, the labels and any warnings; --json prints the server's
PublishSkillResponse. A refused push lists every problem the server found and exits 1.
--dry-run asks the server to validate without publishing.`,
		Example: `  skillctl push ./pdf --category docs --label production -m "fix forms"
  skillctl push ./pdf --library shared        # the shared library (admins, or review)
  skillctl push ./pdf --dry-run               # validate on the server, publish nothing`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.push(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.category, "category", "", `category: the skill is published at /skills/<category>/<name> (default: flat, /skills/<name>)`)
	f.StringArrayVarP(&o.labels, "label", "l", nil, `label to point at the new version besides "latest" (repeatable)`)
	f.StringVarP(&o.message, "message", "m", "", "a note kept with the version")
	f.StringVar(&o.ifLatest, "if-latest", "", `publish only while "latest" is this version ("none": only a new skill)`)
	f.BoolVar(&o.dryRun, "dry-run", false, "validate on the server without publishing")
	f.BoolVar(&o.skipLocalCheck, "skip-local-check", false, "send even when the local check finds errors (the server decides)")
	return cmd
}

func (a *app) push(cmd *cobra.Command, dir string, o pushOptions) error {
	s, err := readSkillDir(cmd.Context(), dir)
	if err != nil {
		return usageErr(err)
	}
	ps, err := checkLocal(s)
	if err != nil {
		return usageErr(err)
	}
	// What cannot be sent is refused whatever --skip-local-check says.
	unsendable := len(s.Files) > skillmd.MaxSkillFiles || len(s.Irregular) > 0 || s.TotalBytes > skillmd.MaxSkillBytes
	if hasErrors(ps) && (!o.skipLocalCheck || unsendable) {
		fmt.Fprintf(a.stderr, "skillctl: %s breaks the publishing rules; nothing was sent:\n", inert(s.Name))
		printProblems(a.stderr, "", ps)
		return &exitError{code: exitInvalid}
	}
	ctx, cancel, err := a.open(cmd, true)
	if err != nil {
		return err
	}
	defer cancel()
	header := &skillsvcv1.PublishSkillHeader{
		Library: a.libraryRef(), Category: o.category, Name: s.Name, Labels: o.labels,
		Message: o.message, ValidateOnly: o.dryRun, IfLatest: o.ifLatest,
	}
	resp, err := a.publish(ctx, s, header, a.progress(s.TotalBytes, "push "+s.Name))
	if err != nil {
		return err
	}
	return a.printPublished(resp, o.dryRun)
}

// publish sends the folder s as one PublishSkill stream.
func (a *app) publish(ctx context.Context, s localSkill, header *skillsvcv1.PublishSkillHeader, bar *progressbar.ProgressBar) (*skillsvcv1.PublishSkillResponse, error) {
	stream, err := a.library().PublishSkill(ctx)
	if err != nil {
		return nil, err
	}
	sendErr := stream.Send(&skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Header{Header: header}})
	for _, f := range s.Files {
		if sendErr != nil {
			break
		}
		sendErr = sendFile(stream, f, bar)
	}
	// io.EOF from Send means the server ended the stream: its status
	// comes from CloseAndRecv.
	if sendErr != nil && !errors.Is(sendErr, io.EOF) {
		return nil, sendErr
	}
	resp, err := stream.CloseAndRecv()
	if bar != nil {
		bar.Finish()
	}
	return resp, err
}

type publishStream interface {
	Send(*skillsvcv1.PublishSkillRequest) error
}

// sendFile streams one file in chunks; an empty file is one empty chunk, so
// the server still sees it.
func sendFile(stream publishStream, f localFile, bar *progressbar.ProgressBar) error {
	file, err := os.Open(f.Abs)
	if err != nil {
		return usageErr(err)
	}
	defer file.Close()
	buf := make([]byte, chunkSize)
	sent := int64(0)
	// The file's mode as it is on disk goes with its first chunk: the
	// server records it (only the executable bit counts).
	mode := uint32(0o644)
	if f.Exec {
		mode = 0o755
	}
	for {
		n, err := io.ReadFull(file, buf)
		if n > 0 || sent == 0 {
			// The file may have grown since it was listed: the listed size
			// is what the limits were checked against.
			if sent+int64(n) > f.Size {
				return usageErr(fmt.Errorf("%s changed while it was sent", f.Rel))
			}
			if e := stream.Send(&skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Chunk{
				Chunk: &skillsvcv1.FileChunk{Path: f.Rel, Data: buf[:n], Mode: mode}}}); e != nil {
				return e
			}
			sent += int64(n)
			mode = 0 // given once
			if bar != nil {
				bar.Add(n)
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return usageErr(err)
		}
	}
}

func (a *app) printPublished(resp *skillsvcv1.PublishSkillResponse, dryRun bool) error {
	if a.jsonOut {
		return a.printJSON(resp)
	}
	v := resp.GetVersion()
	switch {
	case dryRun && resp.GetValid():
		fmt.Fprintf(a.stdout, "valid %s: would be version %s (%d files, %s)\n", inert(v.GetName()), inert(v.GetId()), v.GetFileCount(), humanBytes(v.GetTotalBytes()))
	case dryRun:
		fmt.Fprintf(a.stdout, "invalid %s\n", inert(v.GetName()))
	case a.quiet:
		fmt.Fprintln(a.stdout, inert(v.GetId()))
	default:
		state := "published"
		if v.GetState() == skillsvcv1.VersionState_VERSION_STATE_PENDING {
			state = "pending review"
		}
		fmt.Fprintf(a.stdout, "%s %s version %s (%d files, %s)\n", state, inert(v.GetName()), inert(v.GetId()), v.GetFileCount(), humanBytes(v.GetTotalBytes()))
		if len(v.GetLabels()) > 0 {
			fmt.Fprintf(a.stdout, "labels: %s\n", inert(strings.Join(v.GetLabels(), ", ")))
		}
		if len(resp.GetRemovedFiles()) > 0 {
			fmt.Fprintf(a.stdout, "removed: %s\n", inert(strings.Join(resp.GetRemovedFiles(), ", ")))
		}
	}
	if !a.quiet || dryRun {
		printProblems(a.stdout, "", resp.GetProblems())
		a.printEvals(resp.GetEvals())
	}
	if dryRun && !resp.GetValid() {
		return &exitError{code: exitInvalid}
	}
	return nil
}
