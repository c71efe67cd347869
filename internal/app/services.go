package app

import (
	"flag"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"google.golang.org/grpc"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/provenance"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skillarchive"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/usage"
	"github.com/skillsvc/skillsvc/internal/usageapi"
	"github.com/skillsvc/skillsvc/internal/usagemetrics"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// Services are the gRPC services skillsvc serves over one bucket: the
// filesystem with the skills library behind its skills mount, the skills
// catalog, its admin and the authors' library. NewServices builds them
// once, for the binary (New) and for the in-memory servers of the server
// and MCP tests alike, so tests run the production assembly.
type Services struct {
	FS        *vfs.FS
	Lib       *skills.Library
	ChunkSize int
	// Watch is the catalog's change feed (WatchSkills, MCP's change
	// notifications). Close closes it.
	Watch *watch.Feed
	// Publisher is the authors' write side; New starts its recovery.
	Publisher *library.Publisher
	// Versions is the authors' path (LibraryService and pinned reads).
	Versions *server.Versions
	// Provenance tells where a served skill comes from, to every surface.
	Provenance provenance.Lookup
	// Replies keeps encoded replies for every server Register registers
	// on, so the network server and the in-process channels share them.
	Replies *replies.Cache
	// Archives keeps the skills' archive digests (ListSkills'
	// include_artifacts, the well-known discovery index) in the shared
	// cache.
	Archives *skillarchive.Digests
	// Usage records the uses of skills at every surface (usage.Nop with
	// --usage.enabled=false); UsageReader reads them back per library (nil
	// when off).
	Usage       usage.Recorder
	UsageReader *usage.Reader
	// UsageRanks order each layer's skills by recent use in a prompt
	// block without a query, and break search ties (nil when off).
	UsageRanks *usage.Ranks
	closeUsage func()
}

// Parts are what NewServices builds on besides the configuration: the
// bucket, the skills library over it and what this replica shares with the
// others. Tests leave the shared parts nil: everything stays in the
// process, unobserved.
type Parts struct {
	Bucket objstore.Bucket
	Lib    *skills.Library
	// Cache is the cache shared with the other replicas (Redis behind the
	// LRU): the feed's resume states and the publisher's locks. Nil keeps
	// them in this process.
	Cache cache.Cache
	// Topic carries the feed's "library X changed" between replicas.
	Topic watch.Topic
	// Registerer and Log take the services' metrics and log lines.
	Registerer prometheus.Registerer
	Log        *slog.Logger
	// Publish are the publisher's further options (how it tells the other
	// replicas of a change).
	Publish []library.Option
	// UsageStore is where usage counts are flushed, shared by the replicas
	// (Redis); nil keeps them in this process.
	UsageStore usage.Store
	// Usage, when set, records the uses of skills instead of the recorder
	// --usage.* configures (tests).
	Usage usage.Recorder
}

// DefaultConfig is the configuration a binary given no flag runs with,
// before the storage's own defaults (Load applies those).
func DefaultConfig() Config {
	var c Config
	c.RegisterFlags(flag.NewFlagSet("defaults", flag.ContinueOnError))
	return c
}

// NewServices builds the services cfg asks for over p: the filesystem over
// the bucket and the mount table with the skills library as its
// --skills.mount (the merged library, as the catalog shows it), the change
// feed (--watch.*), the publisher (--library.*, its coexistence check
// asking the catalog's search) and the authors' path over it. Each is
// built once, with its real configuration. Close releases them.
func NewServices(cfg Config, p Parts) (*Services, error) {
	var reader *usage.Reader
	closeUsage := func() {}
	switch {
	case p.Usage != nil:
	case cfg.Usage.Enabled:
		p.Usage, reader, closeUsage = newUsage(cfg, p)
	default:
		p.Usage = usage.Nop
	}
	fs, err := vfs.New(p.Bucket, cfg.Mounts, cfg.VFS, vfs.WithTree(cfg.Skills.Mount, p.Lib.Tree.Counting(p.Usage)))
	if err != nil {
		closeUsage()
		return nil, err
	}
	feedOpts := watch.Options{Cache: p.Cache, Topic: p.Topic, Registerer: p.Registerer}
	var pubOpts []library.Option
	if p.Registerer != nil {
		pubOpts = append(pubOpts, library.WithRegisterer(p.Registerer))
	}
	if p.Log != nil {
		feedOpts.Log = p.Log.With("component", "watch")
		pubOpts = append(pubOpts, library.WithLogger(p.Log))
	}
	feed, err := watch.New(p.Lib.Catalog, cfg.Watch, feedOpts)
	if err != nil {
		closeUsage()
		return nil, err
	}
	locks := p.Cache
	if locks == nil {
		locks = cache.NewLRU(1 << 20)
	}
	pubOpts = append(append(pubOpts, p.Publish...), library.WithCompetitors(competitors{p.Lib.Catalog, cfg.Skills.MaxQueryBytes}))
	pub := library.New(p.Bucket, p.Lib.Catalog, cfg.Library, locks, pubOpts...)
	prov := provenance.Lookup{Pub: pub, Scan: pub.Scanner()}
	s := &Services{
		FS: fs, Lib: p.Lib, ChunkSize: cfg.VFS.ChunkSize, Watch: feed, Publisher: pub,
		Replies:    newReplies(cfg.Skills, p.Cache, p.Registerer, p.Log),
		Archives:   skillarchive.NewDigests(p.Cache),
		Versions:   &server.Versions{Pub: pub, Table: cfg.Mounts, Provenance: prov.Page},
		Provenance: prov,
		Usage:      p.Usage, UsageReader: reader, closeUsage: closeUsage,
	}
	if reader != nil {
		s.UsageRanks = usage.NewRanks(reader)
		p.Lib.Catalog.UseUsage(s.UsageRanks)
	}
	return s, nil
}

// newUsage builds the usage recorder (started) and reader: counts flushed
// to p's usage store (in process without one), days rolled up into the
// bucket below each library's versions root.
func newUsage(cfg Config, p Parts) (usage.Recorder, *usage.Reader, func()) {
	store := p.UsageStore
	if store == nil {
		store = usage.NewMemoryStore(cfg.Usage)
	}
	roll := usage.NewRollup(p.Bucket, cfg.Library.Roots, store, cfg.Usage)
	opts := []usage.Option{usage.WithRollup(roll), usage.WithRegisterer(p.Registerer)}
	if p.Log != nil {
		opts = append(opts, usage.WithLogger(p.Log.With("component", "usage")))
	}
	rec := usage.NewRecorder(cfg.Usage, store, opts...)
	rec.Start()
	reader := usage.NewReader(cfg.Usage, store, roll)
	usagemetrics.RegisterTop(p.Registerer, reader)
	return usagemetrics.Counting(rec, p.Registerer), reader, rec.Close
}

// Close closes the change feed (its watches end: UNAVAILABLE), flushes
// the usage counts and writes the provenance index changes still kept.
func (s *Services) Close() {
	s.Watch.Close()
	s.closeUsage()
	s.Publisher.Close()
}

// Register registers the filesystem, skills, admin, library and usage services
// on r: the network gRPC server, or an in-process channel
// (server.InProcess).
func (s *Services) Register(r grpc.ServiceRegistrar) {
	skillsvcv1.RegisterFilesystemServiceServer(r, server.NewFilesystem(s.FS, s.ChunkSize))
	skillsvcv1.RegisterSkillsServiceServer(r, server.NewSkills(s.Lib, s.ChunkSize, server.WithFeed(s.Watch), server.WithReplies(s.Replies),
		server.WithArchiveDigests(s.Archives), server.WithUsage(s.Usage)).WithVersions(s.Versions))
	skillsvcv1.RegisterAdminServiceServer(r, server.NewAdmin(s.Lib.Catalog, s.Versions))
	skillsvcv1.RegisterLibraryServiceServer(r, server.NewLibrary(s.Versions, s.Lib.Catalog))
	skillsvcv1.RegisterUsageServiceServer(r, usageapi.New(s.UsageReader, s.Lib.Catalog))
}

// newReplies returns the encoded replies' cache of cfg: in process, and in
// c's shared level for --skills.reply-shared-ttl when c has one (Redis; the
// in-process level would hold a second copy of what the cache keeps).
// Without an index refresh every call lists, and nothing is reused across
// calls: nothing is shared then.
func newReplies(cfg skills.Config, c cache.Cache, reg prometheus.Registerer, log *slog.Logger) *replies.Cache {
	rc := replies.New(cfg.ReplyCacheBytes, reg)
	if sh := cache.Shared(c); sh != c && cfg.IndexRefresh > 0 {
		rc.Share(sh, cfg.ReplySharedTTL, libindex.NewCacheLog(log))
	}
	return rc
}
