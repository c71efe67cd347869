package library

import (
	"context"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// Listings carry provenance without a read per skill: each library keeps
// the provenance of its live versions in one object (layout's
// Versions.Provenance), written where a version goes live and where a
// signature is attached to a live version, and read whole by a listing,
// kept in memory for provenanceTTL. An entry names the manifest digest it
// is about: a live copy of other files was uploaded out of band.

// ListedProvenance is a live version's provenance as listings show it.
type ListedProvenance struct {
	Digest string `json:"digest"`
	Provenance
}

type provIndex struct {
	Skills map[string]ListedProvenance `json:"skills"` // by folder name
}

// provenanceTTL is how long a replica's copy of a library's index is
// fresh; past it the next read answers from the copy and reads the index
// again in the background (a call never waits for it once a replica has
// read the library's index once). maxProvCached bounds the libraries a
// replica keeps; past it the copies are dropped and read again as used.
const (
	provenanceTTL = 10 * time.Second
	provReadTime  = 10 * time.Second
	maxProvCached = 1 << 14
)

func (p *Publisher) provKey(l layout.LibraryRef) string {
	return layout.VersionsOf(p.cfg.Root(l)).Provenance()
}

// indexProvenance records rec, live in l, in the library's provenance
// index; a failure is logged, never the change's.
func (p *Publisher) indexProvenance(ctx context.Context, l layout.LibraryRef, rec versions.Record) {
	prov, err := p.Provenance(ctx, l, rec.Name, rec.ID)
	if err == nil {
		err = p.updateProvIndex(ctx, l, func(m map[string]ListedProvenance) { m[rec.Name] = ListedProvenance{Digest: rec.ID, Provenance: prov} })
	}
	if err != nil {
		p.log.Warn("library: provenance index not updated; listings show the skill's provenance once it is", "library", p.cfg.Root(l), "skill", rec.Name, "err", err)
	}
}

func (p *Publisher) updateProvIndex(ctx context.Context, l layout.LibraryRef, change func(map[string]ListedProvenance)) error {
	s := versions.Store{Bucket: p.bucket, Log: p.log}
	key := p.provKey(l)
	err := objstore.RetryConditional(ctx, 8, 20*time.Millisecond, func() error {
		var idx provIndex
		etag, err := s.GetJSON(ctx, key, &idx)
		if err != nil && !objstore.IsNotFound(err) {
			return err
		}
		if idx.Skills == nil {
			idx.Skills = map[string]ListedProvenance{}
		}
		change(idx.Skills)
		return s.PutJSON(ctx, key, idx, objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
	})
	p.prov.Forget(key)
	return err
}

// LibraryProvenance is the provenance index of library l: folder name →
// the live version's provenance and digest. The first read of a library
// on a replica waits for the index; later ones answer from the copy, read
// again in the background once it is provenanceTTL old.
func (p *Publisher) LibraryProvenance(ctx context.Context, l layout.LibraryRef) (map[string]ListedProvenance, error) {
	return p.prov.Get(ctx, p.provKey(l))
}

func (p *Publisher) readProvenance(ctx context.Context, key string) (map[string]ListedProvenance, error) {
	var idx provIndex
	_, err := (versions.Store{Bucket: p.bucket, Log: p.log}).GetJSON(ctx, key, &idx)
	if err != nil && !objstore.IsNotFound(err) {
		return nil, err
	}
	return idx.Skills, nil
}
