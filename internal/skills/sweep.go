package skills

import (
	"context"
	"fmt"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/snapshots"
)

// SweepPins deletes user's expired pins and the snapshots no pin refers to
// (older than the retention), or with dry only counts them. A new pinned
// thread of the user does so too (the snapshots at most once an hour per
// replica), and so does library garbage collection.
func (c *Catalog) SweepPins(ctx context.Context, user string, dry bool) (snapshots.Sweep, error) {
	if c.views.Pins == nil {
		return snapshots.Sweep{}, nil
	}
	if err := mounts.ValidateID("user", user); err != nil {
		return snapshots.Sweep{}, err
	}
	return c.views.Pins.Store.Sweep(ctx, user, dry)
}

// PinnedBlobs calls fn with every blob of the library l's blob space a
// snapshot refers to: for a user's library the user's snapshots, for the
// shared one and a team's every user's (snapshots.Store.Blobs).
func (c *Catalog) PinnedBlobs(ctx context.Context, l layout.LibraryRef, fn func(blobs.Digest) error) error {
	p := c.views.Pins
	if p == nil {
		// Without pins this catalog cannot read snapshots, whose blobs a
		// collection would otherwise delete.
		return fmt.Errorf("%w: pinned threads are not configured, so their snapshots' blobs cannot be told apart", errkind.FailedPrecondition)
	}
	if err := l.Validate(); err != nil {
		return err
	}
	return p.Store.Blobs(ctx, l.User, p.Roots.BlobSpace(l), fn)
}
