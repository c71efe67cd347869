package library

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// GCResult says what a collection deleted (or, dry, would delete).
type GCResult struct {
	BlobsDeleted     int
	BytesFreed       int64
	BlobsKept        int // referenced, or younger than the grace
	SnapshotsDeleted int
	PinsDeleted      int
	// Unreadable names the keys of version records that could not be
	// read: the blobs they may refer to are unknown, so while there is
	// one no blob is deleted (an admin deletes the record,
	// DeleteSkillVersions, and collects again).
	Unreadable []string
}

// maxGCRefs bounds the distinct blobs one collection holds as referenced
// (about 150 bytes each): a library whose versions and snapshots refer to
// more is RESOURCE_EXHAUSTED and nothing is deleted. Versions are bounded
// by --library.max-versions per skill and snapshots by the user's pins, so
// this is reached only by a library of about a million distinct files.
const maxGCRefs = 1 << 20

var errTooManyRefs = fmt.Errorf("%w: the library's versions and snapshots refer to over %d blobs; garbage collection holds no more", errkind.ResourceExhausted, maxGCRefs)

// CollectGarbage deletes the blobs of the library l that no version record
// and no pinned thread's snapshot refers to and that are older than
// --library.gc-grace; for a user's library it first sweeps the user's
// expired pins and unreferenced snapshots (the shared and team libraries'
// blobs are referred to by every user's snapshots, which are only read). The grace protects a publish or
// a pin in flight, whose blobs are written before the record naming them;
// one that reuses an old blob writes it again first (blobs.Store.Fresh),
// and the sweep stats each blob again just before deleting it.
// A dry run deletes nothing and counts what it would delete (blobs a
// snapshot it would sweep refers to count as kept). Callers are admins
// (AdminService): no actor is checked here.
func (p *Publisher) CollectGarbage(ctx context.Context, l layout.LibraryRef, dry bool) (GCResult, error) {
	var res GCResult
	if err := l.Validate(); err != nil {
		return res, err
	}
	start := p.now()
	if l.User != "" {
		sw, err := p.catalog.SweepPins(ctx, l.User, dry)
		if err != nil {
			return res, err
		}
		res.PinsDeleted, res.SnapshotsDeleted = sw.Pins, sw.Snapshots
	}
	// Mark: the one place that decides what is referenced; each package
	// reads its own records.
	refs := map[blobs.Digest]struct{}{}
	mark := func(d blobs.Digest) error {
		if _, ok := refs[d]; !ok && len(refs) == maxGCRefs {
			return errTooManyRefs
		}
		refs[d] = struct{}{}
		return nil
	}
	unreadable, err := p.versionBlobs(ctx, l, mark)
	if err != nil {
		return res, err
	}
	if len(unreadable) > 0 {
		// Safety before progress: a blob only an unreadable record names
		// would look unreferenced.
		res.Unreadable = unreadable
		p.log.Warn("library: garbage collection deletes no blob while a version record is unreadable", "root", p.cfg.Root(l), "keys", unreadable)
		return res, nil
	}
	if err := p.catalog.PinnedBlobs(ctx, l, mark); err != nil {
		return res, err
	}
	// Sweep: a blob listed that none refers to, older than the grace.
	space := p.cfg.BlobSpace(l)
	err = objstore.Walk(ctx, p.bucket, space+"sha256/", func(o objstore.Object) error {
		d := blobs.Digest(strings.TrimPrefix(o.Key, space+"sha256/"))
		if !d.Valid() {
			return nil // not a blob: left alone
		}
		if _, ok := refs[d]; ok || !p.blobs.Collectable(o.ModTime, start) {
			res.BlobsKept++
			return nil
		}
		if !dry {
			// Stat again just before deleting: a publish or a pin that
			// reused the blob since the mark wrote it again first
			// (blobs.Store.Fresh), and its new ModTime keeps it.
			a, err := p.bucket.Stat(ctx, o.Key)
			switch {
			case objstore.IsNotFound(err):
				return nil
			case err != nil:
				return err
			case !p.blobs.Collectable(a.ModTime, start):
				res.BlobsKept++
				return nil
			}
			if err := p.blobs.Delete(ctx, space, d); err != nil {
				return err
			}
		}
		res.BlobsDeleted++
		res.BytesFreed += o.Size
		return nil
	})
	return res, err
}

// versionBlobs calls fn with the digest of every file of every version
// and proposal record of the library l, listing its skills page by page,
// and returns the keys of the records it could not read (logged): their
// blobs are unknown.
func (p *Publisher) versionBlobs(ctx context.Context, l layout.LibraryRef, fn func(blobs.Digest) error) ([]string, error) {
	s := p.store(l)
	prefix := s.Root + "skills/"
	var unreadable []string
	err := objstore.Walk(ctx, p.bucket, prefix, func(o objstore.Object) error {
		_, rest, _ := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/")
		h, ok := strings.CutPrefix(rest, "v/")
		if !ok {
			h, ok = strings.CutPrefix(rest, "p/")
		}
		if !ok {
			return nil // refs.json
		}
		h, ok = strings.CutSuffix(h, ".json")
		if !ok || len(h) != 64 || versions.HexOf(h) != h {
			return nil
		}
		rec, _, err := s.RecordAt(ctx, o.Key)
		if errors.Is(err, errkind.NotFound) {
			return nil // deleted since listed
		}
		if key, bad := versions.IsUnreadable(err); bad {
			unreadable = append(unreadable, key)
			return nil
		}
		if err != nil {
			return err
		}
		for _, f := range rec.Files {
			d := blobs.Digest(f.SHA256)
			if !d.Valid() {
				return fmt.Errorf("%w: version record %s names a file by %q", blobs.ErrCorrupt, o.Key, f.SHA256)
			}
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	})
	return unreadable, err
}
