package skills

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillsearch"
	"github.com/skillsvc/skillsvc/internal/skilltree"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/views"
)

// Library is the skills library of every user, wired over one bucket: the
// Catalog and Exporter behind SkillsService, and the Tree behind the VFS's
// skills mount. All three share one index and merged view per user, and are
// safe for concurrent use. Close it to wait for background revalidations.
type Library struct {
	Catalog  *Catalog
	Exporter *Exporter
	Tree     *skilltree.Tree

	indexes *libindex.Store
	metrics *libindex.Metrics
}

// Option configures New.
type Option func(*options)

type options struct {
	cache    cache.Cache
	reg      prometheus.Registerer
	pins     *PinConfig
	pinAsked func(context.Context) bool
	// embedder, when set, turns on search's semantic stage.
	embedder       skillsearch.Embedder
	semanticWeight float64
}

// WithCache keeps indexes, settings, SKILL.md heads and file contents in c,
// shared by the replicas when c is backed by Redis. The caller closes c
// after the library's last use. Without it (or with nil) they are cached in
// process.
func WithCache(c cache.Cache) Option {
	return func(o *options) { o.cache = c }
}

// WithRegisterer registers the library's metrics on reg.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) { o.reg = reg }
}

// WithEmbeddings turns on the semantic stage of search
// (skillsearch.Indexes.Embed): e embeds each skill once per SKILL.md
// version and model, cached as the analyses are, and each distinct query;
// weight (0..1) is the similarity's share of a hit's relevance. A failing
// endpoint leaves search lexical, never failing a call. Without it no
// embedding is asked for or held.
func WithEmbeddings(e skillsearch.Embedder, weight float64) Option {
	return func(o *options) { o.embedder, o.semanticWeight = e, weight }
}

// WithPins lets a thread pin its library (pins.go): a call for which asked
// reports true is served from its thread's snapshot, taken on the thread's
// first such call. Without it no call is pinned.
func WithPins(cfg PinConfig, asked func(context.Context) bool) Option {
	return func(o *options) { o.pins, o.pinAsked = &cfg, asked }
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
	if cfg.MaxHeldIndexes != 0 {
		log.Warn("skills: --skills.max-held-indexes is deprecated and ignored; what a replica holds decoded is bounded by --skills.max-held-bytes", "max_held_bytes", cfg.MaxHeldBytes)
	}
	m := libindex.NewMetrics(o.reg)
	cl := libindex.NewCacheLog(log)
	ixCfg := cfg.IndexConfig()
	ix := libindex.New(bucket, o.cache, ixCfg, log, cl, m)
	hs := views.NewHeads(log, m)
	hs.Share(o.cache, cfg.HeadTTL, cl)
	vs := views.New(ix, hs, table, cfg.viewsConfig())
	vs.Files = ix.Files()
	if o.pins != nil && o.pinAsked != nil {
		if err := o.pins.Validate(table); err != nil {
			return nil, err
		}
		if err := o.pins.Roots.Apart(cfg.Keys()); err != nil {
			return nil, err
		}
		vs.Pins = views.NewPins(bucket, vs, o.pins.snapshotsConfig(), o.pins.Roots, o.pinAsked, log)
	}
	fs := ix.Files() // what an index build hashed, reads find cached
	var settingsTTL time.Duration
	if cfg.IndexRefresh > 0 {
		settingsTTL = cfg.SettingsTTL
	}
	tree := skilltree.New(vs, fs, cfg.MaxFileBytes)
	si := skillsearch.New(bucket, ix.Held(), skillsearch.Config{BodyBytes: cfg.SearchBodyBytes, BodyReads: cfg.SearchBodyReads}, log, o.reg)
	si.Share(o.cache, cfg.HeadTTL, cl)
	if o.embedder != nil {
		si.Embed(o.embedder, o.semanticWeight, o.reg)
	}
	c := &Catalog{
		bucket: bucket, cfg: cfg, views: vs, files: fs, tree: tree,
		settings:   settings.NewStore(bucket, o.cache, settingsTTL, cfg.IndexMaxStale, vs.Layout.Settings, ix.Held(), cl, m),
		searchIx:   si,
		skillMDs:   cache.NewShelf[*skillview.SkillMD](ix.Held(), heldSkillMD),
		admitParse: newAdmission(), admitReply: newAdmission(),
	}
	vs.UserScopes = func(ctx context.Context, id mounts.Caller) ([]settings.ScopeDef, error) {
		st, err := c.settings.Get(ctx, id)
		return st.Scopes, err
	}
	return &Library{
		Catalog:  c,
		Exporter: &Exporter{catalog: c},
		Tree:     tree,
		indexes:  ix,
		metrics:  m,
	}, nil
}

// Close waits for the background revalidations under way.
func (l *Library) Close() { l.indexes.Close() }
