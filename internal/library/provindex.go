package library

import (
	"context"
	"errors"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/provindex"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// Listings carry provenance without a read per skill: each library keeps
// the provenance of its live versions in one object (internal/provindex),
// written where a version goes live and where a signature is attached to
// a live version, read whole by a listing.

// ListedProvenance is a live version's provenance as listings show it.
type ListedProvenance = provindex.Entry

// Provenance is where a served copy comes from.
type Provenance = provindex.Provenance

func (p *Publisher) provKey(l layout.LibraryRef) string {
	return layout.VersionsOf(p.cfg.Root(l)).Provenance()
}

// indexProvenance records rec, live in l, in the library's provenance
// index, with the changes queued beside it on this replica. A write that
// fails is kept and retried in the background (provindex), never the
// change's failure.
func (p *Publisher) indexProvenance(ctx context.Context, l layout.LibraryRef, rec versions.Record) {
	prov, err := p.Provenance(ctx, l, rec.Name, rec.ID)
	if err == nil {
		err = p.prov.Set(ctx, p.provKey(l), rec.Name, ListedProvenance{Digest: rec.ID, Provenance: prov})
	}
	if err != nil && !errors.Is(err, provindex.ErrKept) {
		p.log.Warn("library: provenance index not updated; listings show the skill's provenance once it is", "library", p.cfg.Root(l), "skill", rec.Name, "err", err)
	}
}

// LibraryProvenance is the provenance index of library l: folder name →
// the live version's provenance and digest. The first read of a library
// on a replica waits for the index; later ones answer from the copy, read
// again in the background once stale.
func (p *Publisher) LibraryProvenance(ctx context.Context, l layout.LibraryRef) (map[string]ListedProvenance, error) {
	return p.prov.Get(ctx, p.provKey(l))
}

// RepairProvenance asks, off the call, for the index of l to name folder's
// live copy of digest, which a listing found it does not: when a version
// of those files is the skill's latest, its provenance is written. No
// storage request on the call (provindex.Index.Repair).
func (p *Publisher) RepairProvenance(l layout.LibraryRef, folder, digest string) {
	if l.Validate() != nil || checkName(folder) != nil {
		return
	}
	p.prov.Repair(p.provKey(l), folder, digest, func(ctx context.Context) (ListedProvenance, bool, error) {
		prov, err := p.Provenance(ctx, l, folder, digest)
		if err != nil || prov.OutOfBand {
			return ListedProvenance{}, false, err
		}
		refs, _, err := p.store(l).Refs(ctx, folder)
		if err != nil || refs.Labels[versions.Latest] != prov.Version {
			return ListedProvenance{}, false, err // a copy of an older version's files, uploaded
		}
		return ListedProvenance{Digest: digest, Provenance: prov}, true, nil
	})
}

// Close writes the provenance index changes still kept once more, and
// waits for the background work.
func (p *Publisher) Close() { p.prov.Close() }
