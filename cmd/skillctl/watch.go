package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// Reconnect backoff of watch: doubling from the first to the last, reset
// after every message.
const (
	watchBackoffMin = 200 * time.Millisecond
	watchBackoffMax = 10 * time.Second
)

func (a *app) watchCmd() *cobra.Command {
	var since string
	var count int
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Print changes to your catalog as they happen",
		Long: `watch streams the changes to your catalog (skills added, changed, removed, enabled or
disabled), whether made through the API or straight in the bucket, one line each: kind, name,
path, layer and the new manifest digest. When the connection drops it reconnects and resumes
from the last library digest it saw, so no change is missed; if the server no longer knows that
digest it says "reset" (list again with ls). --json prints each server message as a line of JSON.
It runs until interrupted, or until --count changes were printed.`,
		Example: `  skillctl watch
  skillctl watch --json --since sha256:9c1e...   # resume from a digest`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.connect(cmd); err != nil {
				return err
			}
			return a.watch(cmd.Context(), since, count)
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "a library digest (of ls --json or an earlier watch) to start after")
	cmd.Flags().IntVar(&count, "count", 0, "exit after this many changes (0: run until interrupted)")
	return cmd
}

// watch follows WatchSkills, reconnecting with since_digest set to the
// last digest seen after a transient failure.
func (a *app) watch(ctx context.Context, since string, count int) error {
	backoff := watchBackoffMin
	printed := 0
	for {
		got, err := a.watchOnce(ctx, &since, count, &printed)
		if count > 0 && printed >= count {
			return nil
		}
		if ctx.Err() != nil {
			return nil // interrupted: a normal end
		}
		if !transient(err) {
			return err
		}
		if got {
			backoff = watchBackoffMin
		}
		if !a.quiet && !a.jsonOut {
			fmt.Fprintf(a.stderr, "watch: %v; reconnecting in %v\n", errText(err), backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchBackoffMax)
	}
}

func errText(err error) string {
	if err == nil || errors.Is(err, io.EOF) {
		return "stream ended"
	}
	if st, ok := status.FromError(err); ok {
		return st.Code().String() + ": " + inert(st.Message())
	}
	return err.Error()
}

// transient reports whether a watch should reconnect after err.
func transient(err error) bool {
	if err == nil || errors.Is(err, io.EOF) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted, codes.Internal, codes.DeadlineExceeded:
		return true
	}
	return false
}

// watchOnce runs one WatchSkills stream until it fails; got reports whether
// it received anything.
func (a *app) watchOnce(ctx context.Context, since *string, count int, printed *int) (got bool, err error) {
	cctx, cancel, err := a.callCtx(ctx, false)
	if err != nil {
		return false, err
	}
	defer cancel()
	stream, err := a.skills().WatchSkills(cctx, &skillsvcv1.WatchSkillsRequest{SinceDigest: *since})
	if err != nil {
		return false, err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return got, err
		}
		got = true
		if d := m.GetLibraryDigest(); d != "" {
			*since = d
		}
		if a.jsonOut {
			if err := a.printJSONLine(m); err != nil {
				return got, err
			}
			*printed += len(m.GetChanges())
		} else {
			if m.GetReset_() {
				fmt.Fprintf(a.stdout, "%s reset   the server no longer knows the digest resumed from: list the catalog again\n", now())
			}
			for _, c := range m.GetChanges() {
				fmt.Fprintf(a.stdout, "%s %-8s %s %s %s %s\n", now(), kindName(c.GetKind()), inert(c.GetName()), inert(c.GetPath()), dash(c.GetLayer()), dash(shortID(c.GetManifestDigest())))
				*printed++
				if count > 0 && *printed >= count {
					return got, nil
				}
			}
		}
		if count > 0 && *printed >= count {
			return got, nil
		}
	}
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func kindName(k skillsvcv1.SkillChange_Kind) string {
	s := strings.TrimPrefix(k.String(), "KIND_")
	return strings.ToLower(s)
}
