package skills

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
)

// parsed is the result of parsing one SKILL.md head.
type parsed struct {
	fm       Frontmatter
	problems Problems
}

type headKey struct{ key, etag string }

// heads reads and parses the frontmatter at the head of each SKILL.md. A
// version of a SKILL.md (key and ETag) never changes, so its head is
// content-addressed: parsed results are kept in process, the head bytes in
// the shared cache for --skills.head-ttl, so that no replica reads an
// unchanged SKILL.md from storage twice, and an invalid one is logged once
// per replica.
type heads struct {
	bucket      objstore.Bucket
	cache       cache.Cache
	ttl         time.Duration
	headBytes   int64
	concurrency int
	log         *slog.Logger
	cacheLog    *cacheLog
	parsed      *lru.Cache[headKey, parsed]
	reported    *lru.Cache[headKey, struct{}] // nested SKILL.md files already logged
}

func newHeads(bucket objstore.Bucket, c cache.Cache, cfg Config, log *slog.Logger, cl *cacheLog) *heads {
	p, _ := lru.New[headKey, parsed](max(4*cfg.MaxSkills, 16))
	r, _ := lru.New[headKey, struct{}](max(cfg.MaxSkills, 16))
	return &heads{
		bucket: bucket, cache: c, ttl: cfg.HeadTTL, headBytes: int64(cfg.HeadBytes), concurrency: cfg.Concurrency,
		log: log, cacheLog: cl, parsed: p, reported: r,
	}
}

// reportNested logs, once per version, a SKILL.md that lies too deep to be
// served: the library's author expects it to be a skill.
func (h *heads) reportNested(ctx context.Context, s *skillRef) {
	k := headKey{s.skillMD.Key, s.skillMD.ETag}
	if ok, _ := h.reported.ContainsOrAdd(k, struct{}{}); !ok {
		h.log.WarnContext(ctx, "skill not served: nested too deep", "layer", s.layer, "skill", s.dir, "problem", nestedProblem)
	}
}

// parseAll sets the head of every skill, or marks it gone when its SKILL.md
// was deleted since the listing. It looks in process first, then fetches
// the rest from the shared cache in one call, reads what is still missing
// from storage (concurrency at a time) and caches those heads in one call.
// user is the user whose layer LayerUser skills belong to.
func (h *heads) parseAll(ctx context.Context, user string, refs []*skillRef) error {
	var missing []*skillRef
	var keys []string
	for _, s := range refs {
		if p, ok := h.parsed.Get(headKey{s.skillMD.Key, s.skillMD.ETag}); ok {
			s.head = p
			continue
		}
		tag := sharedTag
		if s.layer == LayerUser {
			tag = user
		}
		missing = append(missing, s)
		keys = append(keys, headCacheKey(tag, s.skillMD.Key, s.skillMD.ETag))
	}
	if len(missing) == 0 {
		return nil
	}
	hits, err := h.cache.Fetch(ctx, keys)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		h.cacheLog.failed(ctx, "fetching skill heads", err)
	}
	var mu sync.Mutex
	read := map[string][]byte{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.concurrency)
	for i, s := range missing {
		if head, ok := hits[keys[i]]; ok {
			s.head = h.parse(ctx, s, head)
			continue
		}
		g.Go(panics.Guard(func() error {
			head, etag, err := h.read(gctx, s.skillMD)
			if objstore.IsNotFound(err) {
				s.gone = true // deleted since listed
				return nil
			}
			if err != nil {
				return err
			}
			s.head = h.parse(gctx, s, head)
			if etag == s.skillMD.ETag { // not a version written since the listing
				mu.Lock()
				read[keys[i]] = head
				mu.Unlock()
			}
			return nil
		}))
	}
	err = g.Wait()
	// What was read is worth keeping even when another read failed.
	if len(read) > 0 && ctx.Err() == nil {
		if serr := h.cache.Store(ctx, read, h.ttl); serr != nil {
			h.cacheLog.failed(ctx, "storing skill heads", serr)
		}
	}
	return err
}

// parse parses the head of s and remembers the result.
func (h *heads) parse(ctx context.Context, s *skillRef, head []byte) parsed {
	fm, _, problems := ParseSkillMD(head, s.folder)
	p := parsed{fm: fm, problems: problems}
	if !problems.Valid() {
		h.log.WarnContext(ctx, "invalid skill", "layer", s.layer, "skill", s.dir, "problems", problems.Errors)
	}
	h.parsed.Add(headKey{s.skillMD.Key, s.skillMD.ETag}, p)
	return p
}

// read returns enough of the start of SKILL.md to hold its frontmatter:
// headBytes first, more only when the frontmatter runs past them. etag is
// the version read, which may be newer than the listed one.
func (h *heads) read(ctx context.Context, o objstore.Object) (head []byte, etag string, err error) {
	rc, a, err := h.bucket.GetRange(ctx, o.Key, 0, h.headBytes)
	if err != nil {
		return nil, "", err
	}
	head, err = io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, "", err
	}
	if int64(len(head)) >= a.Size {
		return head, a.ETag, nil
	}
	if end, opened := frontmatterEnd(bytes.TrimPrefix(head, []byte(bom))); !opened || (end > 0 && end < len(head)) {
		return head, a.ETag, nil
	}
	rc, a, err = h.bucket.GetRange(ctx, o.Key, 0, MaxFrontmatterBytes+int64(len(bom))+1)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	head, err = io.ReadAll(rc)
	return head, a.ETag, err
}
