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
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// parsed is the result of parsing one SKILL.md head.
type parsed struct {
	fm       skillmd.Frontmatter
	problems skillmd.Problems
}

type headKey struct{ key, etag string }

// heads reads and parses the frontmatter at the head of each SKILL.md. A
// version of a SKILL.md (key and ETag) never changes, so its head is
// content-addressed: the head bytes live in the cache for --skills.head-ttl
// (an index that changed reads only the heads no replica read before), and
// parsed results stay in process, so an invalid skill is logged once per
// replica.
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

// fetch returns the head of each SKILL.md in objs, by key: from the cache
// in one call, the rest read from storage (concurrency at a time) and
// cached in one call. A SKILL.md deleted since it was listed is absent.
// tag is the hash tag of the library's cache keys.
func (h *heads) fetch(ctx context.Context, tag string, objs []objstore.Object) (map[string][]byte, error) {
	out := make(map[string][]byte, len(objs))
	if len(objs) == 0 {
		return out, nil
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = headCacheKey(tag, o.Key, o.ETag)
	}
	hits, err := h.cache.Fetch(ctx, keys)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		h.cacheLog.failed(ctx, "fetching skill heads", err)
	}
	var mu sync.Mutex
	read := map[string][]byte{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.concurrency)
	for i, o := range objs {
		if head, ok := hits[keys[i]]; ok {
			mu.Lock() // the reads started below write out too
			out[o.Key] = head
			mu.Unlock()
			continue
		}
		g.Go(panics.Guard(func() error {
			head, etag, err := h.read(gctx, o)
			if objstore.IsNotFound(err) {
				return nil // deleted since listed
			}
			if err != nil {
				return err
			}
			head = trimHead(head)
			mu.Lock()
			defer mu.Unlock()
			out[o.Key] = head
			if etag == o.ETag { // not a version written since the listing
				read[keys[i]] = head
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
	if err != nil {
		return nil, err
	}
	return out, nil
}

// trimHead cuts a head after its frontmatter, which is all a listing needs:
// an index holds a head per skill.
func trimHead(head []byte) []byte {
	rest := bytes.TrimPrefix(head, []byte(skillmd.BOM))
	if end, _ := skillmd.FrontmatterEnd(rest); end > 0 {
		return head[:len(head)-len(rest)+end]
	}
	return head
}

// parse returns the parsed head of s, parsing it once per version.
func (h *heads) parse(ctx context.Context, s *skillRef, head []byte) parsed {
	k := headKey{s.skillMD.Key, s.skillMD.ETag}
	if p, ok := h.parsed.Get(k); ok {
		return p
	}
	fm, _, problems := skillmd.ParseSkillMD(head, s.folder)
	p := parsed{fm: fm, problems: problems}
	if !problems.Valid() {
		h.log.WarnContext(ctx, "invalid skill", "layer", s.layer, "skill", s.dir, "problems", problems.Errors)
	}
	h.parsed.Add(k, p)
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
	if end, opened := skillmd.FrontmatterEnd(bytes.TrimPrefix(head, []byte(skillmd.BOM))); !opened || (end > 0 && end < len(head)) {
		return head, a.ETag, nil
	}
	rc, a, err = h.bucket.GetRange(ctx, o.Key, 0, skillmd.MaxFrontmatterBytes+int64(len(skillmd.BOM))+1)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	head, err = io.ReadAll(rc)
	return head, a.ETag, err
}
