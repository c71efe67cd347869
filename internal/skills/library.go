package skills

import (
	"log/slog"

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

// New returns the library.
func New(bucket objstore.Bucket, table *mounts.Table, cfg Config, log *slog.Logger) (*Library, error) {
	if err := cfg.Validate(table); err != nil {
		return nil, err
	}
	vs := newViews(newListings(bucket, cfg, log), newHeads(bucket, cfg, log), table, cfg)
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
