package library

import (
	"context"
	"sync"
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

// provenanceTTL bounds how stale a replica's copy of a library's index is.
const provenanceTTL = 10 * time.Second

type provCache struct {
	mu sync.Mutex
	m  map[string]provCached // by versions root
}

type provCached struct {
	at  time.Time
	idx map[string]ListedProvenance
}

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
	p.prov.mu.Lock()
	delete(p.prov.m, p.cfg.Root(l))
	p.prov.mu.Unlock()
	return err
}

// LibraryProvenance is the provenance index of library l: folder name →
// the live version's provenance and digest. One read per provenanceTTL.
func (p *Publisher) LibraryProvenance(ctx context.Context, l layout.LibraryRef) (map[string]ListedProvenance, error) {
	root := p.cfg.Root(l)
	p.prov.mu.Lock()
	c, ok := p.prov.m[root]
	p.prov.mu.Unlock()
	if ok && p.now().Sub(c.at) < provenanceTTL {
		return c.idx, nil
	}
	var idx provIndex
	_, err := (versions.Store{Bucket: p.bucket, Log: p.log}).GetJSON(ctx, p.provKey(l), &idx)
	if err != nil && !objstore.IsNotFound(err) {
		return nil, err
	}
	p.prov.mu.Lock()
	if p.prov.m == nil {
		p.prov.m = map[string]provCached{}
	}
	p.prov.m[root] = provCached{at: p.now(), idx: idx.Skills}
	p.prov.mu.Unlock()
	return idx.Skills, nil
}
