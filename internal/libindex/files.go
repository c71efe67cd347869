package libindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"io/fs"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// readTimeout bounds one shared read of a file from storage.
const readTimeout = 30 * time.Second

// Files reads the files of skills. A file as listed (key and ETag) never
// changes, so its content is cached by both, never invalidated: a warm
// GetSkill, ReadSkillFile or /skills Read costs no storage request.
// Concurrent misses of one file share one read, on a context of its own, so
// one caller giving up fails no one else.
type Files struct {
	bucket   objstore.Bucket
	cache    cache.Cache
	ttl      time.Duration
	maxBytes int64 // larger files are read from storage every time
	cacheLog *CacheLog
	metrics  *Metrics
	flight   singleflight.Group
}

// NewFiles returns the file reader over bucket, caching contents of at most
// cfg.MaxCachedFileBytes in c for cfg.HeadTTL.
func NewFiles(bucket objstore.Bucket, c cache.Cache, cfg Config, cl *CacheLog, m *Metrics) *Files {
	return &Files{bucket: bucket, cache: c, ttl: cfg.HeadTTL, maxBytes: cfg.MaxCachedFileBytes, cacheLog: cl, metrics: m}
}

// cacheable reports whether o's content is cached.
func (f *Files) cacheable(o objstore.Object) bool {
	return o.ETag != "" && o.Size <= f.maxBytes
}

// Open reads o from offset for length bytes (length < 0: to the end), as
// objstore.Bucket.GetRange does; the attributes are the whole file's.
func (f *Files) Open(ctx context.Context, o objstore.Object, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	if !f.cacheable(o) {
		f.metrics.Files.WithLabelValues("uncached").Inc()
		return f.bucket.GetRange(ctx, o.Key, offset, length)
	}
	data, a, whole, err := f.read(ctx, o)
	if err != nil {
		return nil, a, err
	}
	if !whole {
		// Changed past what is cached since it was listed: stream it, so a
		// file that grew stays bounded by the caller's own limits.
		return f.bucket.GetRange(ctx, o.Key, offset, length)
	}
	if offset >= int64(len(data)) {
		return io.NopCloser(bytes.NewReader(nil)), a, nil
	}
	data = data[offset:]
	if length >= 0 && length < int64(len(data)) {
		data = data[:length]
	}
	return io.NopCloser(bytes.NewReader(data)), a, nil
}

// read returns the content of o, a cacheable file, and its attributes
// (with the mode a read returns: cached with the content, 2 bytes before
// it); whole is false when the stored file has grown past what is cached.
func (f *Files) read(ctx context.Context, o objstore.Object) (data []byte, a objstore.Attributes, whole bool, err error) {
	key := fileCacheKey(o.Key, listedVersion(o))
	hits, err := f.cache.Fetch(ctx, []string{key})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, a, false, cerr
		}
		f.cacheLog.Failed(ctx, "fetching a skill file", err)
	}
	if data, a, ok := cachedFile(hits[key], o); ok {
		f.metrics.Files.WithLabelValues("hit").Inc()
		return data, a, true, nil
	}
	f.metrics.Files.WithLabelValues("miss").Inc()
	type read struct {
		data []byte
		a    objstore.Attributes
	}
	ch := f.flight.DoChan(key, panics.GuardValue(func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		defer cancel()
		// A read that just ended may have filled the cache after this
		// caller missed it.
		if hits, err := f.cache.Fetch(rctx, []string{key}); err == nil {
			if data, a, ok := cachedFile(hits[key], o); ok {
				return read{data, a}, nil
			}
		}
		rc, a, err := f.bucket.Get(rctx, o.Key)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		// The file may have grown since it was listed: never read more
		// than a cacheable file holds.
		var buf bytes.Buffer
		buf.Write(binary.BigEndian.AppendUint16(nil, uint16(a.Mode.Perm())))
		if _, err := buf.ReadFrom(io.LimitReader(rc, f.maxBytes+1)); err != nil {
			return nil, err
		}
		data := buf.Bytes()[2:]
		if a.ETag == o.ETag && int64(len(data)) == a.Size {
			if err := f.cache.Store(rctx, map[string][]byte{key: buf.Bytes()}, f.ttl); err != nil {
				f.cacheLog.Failed(rctx, "storing a skill file", err)
			}
		}
		return read{data, a}, nil
	}))
	select {
	case <-ctx.Done():
		return nil, a, false, ctx.Err()
	case res := <-ch:
		if res.Shared {
			f.metrics.Coalesced.WithLabelValues("file").Inc()
		}
		if res.Err != nil {
			return nil, a, false, res.Err
		}
		r := res.Val.(read)
		// A read cut at maxBytes (the file grew) is not the whole file.
		return r.data, r.a, int64(len(r.data)) == r.a.Size, nil
	}
}

// cachedFile reads a cached file of o: its mode, then its content.
func cachedFile(v []byte, o objstore.Object) ([]byte, objstore.Attributes, bool) {
	if int64(len(v)) != o.Size+2 {
		return nil, objstore.Attributes{}, false
	}
	a := o.Attributes
	a.Mode = fs.FileMode(binary.BigEndian.Uint16(v)).Perm()
	return v[2:], a, true
}

// Getter reads o through the cache as a textfile.Getter.
func (f *Files) Getter(o objstore.Object) textfile.Getter { return getter{f, o} }

// getter reads one file through the cache as a textfile.Getter.
type getter struct {
	f *Files
	o objstore.Object
}

var _ textfile.Getter = getter{}

func (g getter) Get(ctx context.Context, _ string) (io.ReadCloser, objstore.Attributes, error) {
	return g.f.Open(ctx, g.o, 0, -1)
}

// Binary reports for each file whether it is binary, from its first
// textfile.SniffBytes: one cache call for all, a ranged read of each file
// no replica sniffed before. A file deleted since listed counts as text.
func (f *Files) Binary(ctx context.Context, objs []objstore.Object, concurrency int) ([]bool, error) {
	out := make([]bool, len(objs))
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = sniffCacheKey(o.Key, o.ETag)
	}
	hits, err := f.cache.Fetch(ctx, keys)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		f.cacheLog.Failed(ctx, "fetching file kinds", err)
	}
	found := make([]bool, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i, o := range objs {
		if v, ok := hits[keys[i]]; ok && len(v) == 1 {
			out[i] = v[0] == 1
			continue
		}
		g.Go(panics.Guard(func() error {
			rc, a, err := f.bucket.GetRange(gctx, o.Key, 0, textfile.SniffBytes)
			if objstore.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			defer rc.Close()
			head, err := io.ReadAll(rc)
			if err != nil {
				return err
			}
			out[i] = textfile.IsBinary(head, o.Size)
			found[i] = a.ETag == o.ETag && o.ETag != ""
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sniffed := map[string][]byte{}
	for i := range objs {
		if found[i] {
			sniffed[keys[i]] = sniffValue(out[i])
		}
	}
	if len(sniffed) > 0 {
		if err := f.cache.Store(ctx, sniffed, f.ttl); err != nil {
			f.cacheLog.Failed(ctx, "storing file kinds", err)
		}
	}
	return out, nil
}

// sniffValue is the cached form of whether a file is binary.
func sniffValue(binary bool) []byte {
	if binary {
		return []byte{1}
	}
	return []byte{0}
}
