package libindex

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// headReader reads the frontmatter at the head of each SKILL.md. A
// version of a SKILL.md (key and ETag) never changes, so its head is
// content-addressed: the head bytes live in the cache for --skills.head-ttl,
// and an index that changed reads only the heads no replica read before.
type headReader struct {
	bucket      objstore.Bucket
	cache       cache.Cache
	ttl         time.Duration
	headBytes   int64
	concurrency int
	cacheLog    *CacheLog
}

// fetch returns the head of each SKILL.md in objs, by key: from the cache
// in one call, the rest read from storage (concurrency at a time) and
// cached in one call. A SKILL.md deleted since it was listed is absent;
// one rewritten since has the head of the version read, and that version's
// attributes in moved, by key, so the index names the version its head is
// of (what is keyed by version, here and in the parses the catalog shares,
// then holds that version's bytes). tag is the hash tag of the library's
// cache keys.
func (h *headReader) fetch(ctx context.Context, tag string, objs []objstore.Object) (heads map[string][]byte, moved map[string]objstore.Attributes, err error) {
	out := make(map[string][]byte, len(objs))
	moved = map[string]objstore.Attributes{}
	if len(objs) == 0 {
		return out, moved, nil
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = headCacheKey(tag, o.Key, o.ETag)
	}
	hits, err := h.cache.Fetch(ctx, keys)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, nil, cerr
		}
		h.cacheLog.Failed(ctx, "fetching skill heads", err)
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
			head, a, err := h.read(gctx, o)
			if objstore.IsNotFound(err) {
				return nil // deleted since listed
			}
			if err != nil {
				return err
			}
			// A copy: the frontmatter is often a tenth of what was
			// read, and an index holds its heads for as long as it lives.
			head = bytes.Clone(trimHead(head))
			mu.Lock()
			defer mu.Unlock()
			out[o.Key] = head
			switch {
			case a.ETag == o.ETag:
				read[keys[i]] = head
			case a.ETag != "": // a version written since the listing
				moved[o.Key] = a
				read[headCacheKey(tag, o.Key, a.ETag)] = head
			}
			return nil
		}))
	}
	err = g.Wait()
	// What was read is worth keeping even when another read failed.
	if len(read) > 0 && ctx.Err() == nil {
		if serr := h.cache.Store(ctx, read, h.ttl); serr != nil {
			h.cacheLog.Failed(ctx, "storing skill heads", serr)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return out, moved, nil
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

// read returns enough of the start of SKILL.md to hold its frontmatter:
// headBytes first, more only when the frontmatter runs past them. a is the
// version read, which may be newer than the listed one.
func (h *headReader) read(ctx context.Context, o objstore.Object) (head []byte, a objstore.Attributes, err error) {
	rc, a, err := h.bucket.GetRange(ctx, o.Key, 0, h.headBytes)
	if err != nil {
		return nil, a, err
	}
	head, err = io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, a, err
	}
	if int64(len(head)) >= a.Size {
		return head, a, nil
	}
	if end, opened := skillmd.FrontmatterEnd(bytes.TrimPrefix(head, []byte(skillmd.BOM))); !opened || (end > 0 && end < len(head)) {
		return head, a, nil
	}
	rc, a, err = h.bucket.GetRange(ctx, o.Key, 0, skillmd.MaxFrontmatterBytes+int64(len(skillmd.BOM))+1)
	if err != nil {
		return nil, a, err
	}
	defer rc.Close()
	head, err = io.ReadAll(rc)
	return head, a, err
}
