package skills

import (
	"log/slog"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Library is the skills library of every user, wired over one bucket: the
// Catalog and Exporter behind SkillsService, and the Tree behind the VFS's
// skills mount. All three share one listing cache and merged view per user,
// and are safe for concurrent use.
type Library struct {
	Catalog  *Catalog
	Exporter *Exporter
	Tree     *Tree
}

// Option configures New.
type Option func(*options)

type options struct {
	cache cache.Cache
}

// WithCache keeps listings and SKILL.md heads in c, shared by the replicas
// when c is backed by Redis. The caller closes c after the library's last
// use. Without it (or with nil) they are cached in process.
func WithCache(c cache.Cache) Option {
	return func(o *options) { o.cache = c }
}

// defaultCacheBytes bounds the in-process cache New makes without WithCache.
const defaultCacheBytes = 32 << 20

// New returns the library.
func New(bucket objstore.Bucket, table *mounts.Table, cfg Config, log *slog.Logger, opts ...Option) (*Library, error) {
	if err := cfg.Validate(table); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.cache == nil {
		o.cache = cache.NewLRU(defaultCacheBytes)
	}
	cl := &cacheLog{log: log}
	vs := newViews(newListings(bucket, o.cache, cfg, log, cl), newHeads(bucket, o.cache, cfg, log, cl), table, cfg)
	c := &Catalog{
		bucket: bucket, cfg: cfg, views: vs,
		settings: &settingsStore{bucket: bucket, keyTemplate: cfg.SettingsKey},
	}
	return &Library{
		Catalog:  c,
		Exporter: &Exporter{catalog: c},
		Tree:     &Tree{views: vs},
	}, nil
}
