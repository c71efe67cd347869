package app

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/vfs"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// Services are the gRPC services skillsvc serves over one bucket: the
// filesystem with the skills library behind its skills mount, the skills
// catalog and its admin. The binary, its HTTP endpoints (through
// server.Loopback) and the in-memory servers of the server and MCP tests
// all register the same set.
type Services struct {
	FS        *vfs.FS
	Lib       *skills.Library
	ChunkSize int
	// Watch is the catalog's change feed (WatchSkills, MCP's change
	// notifications). NewServices makes one with the default bounds and an
	// in-process cache; New replaces it with one on the shared cache and the
	// replicas' topic. Whoever made the Services closes it.
	Watch *watch.Feed
	// Versions is the authors' path (LibraryService and pinned reads).
	// NewServices makes one with the default layout, a process-local lock
	// and insecure mode's admin header; app.New replaces it with the
	// configured one.
	Versions *server.Versions
	// Replies keeps the skills service's encoded replies, one cache for
	// every server Register registers on. NewServices makes one in process
	// within --skills.reply-cache-bytes; New replaces it with one that also
	// shares replies through Redis, its metrics registered.
	Replies *replies.Cache
}

// NewServices builds the filesystem over bucket and table with lib as its
// skillsMount mount: the skills mount shows the merged library, as the
// catalog does.
func NewServices(bucket objstore.Bucket, table *mounts.Table, cfg vfs.Config, lib *skills.Library, skillsMount string) (*Services, error) {
	fs, err := vfs.New(bucket, table, cfg, vfs.WithTree(skillsMount, lib.Tree))
	if err != nil {
		return nil, err
	}
	feed, err := watch.New(lib.Catalog, watch.DefaultConfig(), watch.Options{})
	if err != nil {
		return nil, err
	}
	pub := library.New(bucket, lib.Catalog, library.DefaultConfig(), cache.NewLRU(1<<20), library.WithCompetitors(competitors{lib.Catalog, skills.DefaultConfig().MaxQueryBytes}))
	return &Services{
		FS: fs, Lib: lib, ChunkSize: cfg.ChunkSize, Watch: feed, Versions: &server.Versions{Pub: pub, Table: table, Insecure: true},
		Replies: replies.New(lib.Catalog.ReplyCacheBytes(), nil),
	}, nil
}

// Register registers the filesystem, skills, admin and library services
// on r.
func (s *Services) Register(r grpc.ServiceRegistrar) {
	skillsvcv1.RegisterFilesystemServiceServer(r, server.NewFilesystem(s.FS, s.ChunkSize))
	skillsvcv1.RegisterSkillsServiceServer(r, server.NewSkills(s.Lib, s.ChunkSize, server.WithFeed(s.Watch), server.WithReplies(s.Replies)).WithVersions(s.Versions))
	skillsvcv1.RegisterAdminServiceServer(r, server.NewAdmin(s.Lib.Catalog, s.Versions))
	skillsvcv1.RegisterLibraryServiceServer(r, server.NewLibrary(s.Versions, s.Lib.Catalog))
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
