package libindex

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// Digest is the sha256 of a file's bytes as read, how many there were, and
// the mode the file is served with (filemode.Of: the one the same read
// returned, or by its first bytes). It is of the version listed unless the
// file was replaced between the listing and the read; then it is of the
// bytes read (the next listing shows the new ETag, which is hashed again).
//
// Size is 32 bits, as a hashed file is within skillmd.MaxSkillBytes: with
// the mode, a digest takes what it took without one (every user's index
// holds one per file).
type Digest struct {
	Size int32
	Mode fs.FileMode
	Sum  [sha256.Size]byte
}

// digestBytes is the most one digest takes in an encoded index or in the
// cache: its object number, its size, the sum and the mode.
const digestBytes = sha256.Size + 2*binary.MaxVarintLen64 + binary.MaxVarintLen32

// hashed reports whether an index holds the digests of a skill's files:
// only of a skill within the MCP extension's limits, so no build reads
// more than skillmd.MaxSkillBytes for one skill.
func hashed(files []objstore.Object) bool {
	var total int64
	for _, f := range files {
		total += f.Size
	}
	return !skillmd.OverLimits(len(files), total)
}

// digestReader hashes skill files. A version of a file (key and ETag) never
// changes, so its digest is content-addressed like a head: it lives in the
// cache for --skills.head-ttl, and an index dropped by an operator (or
// built by a replica without one) hashes only what no replica hashed before.
type digestReader struct {
	bucket      objstore.Bucket
	cache       cache.Cache
	files       *Files // the file contents cache: hashing a file fills it
	ttl         time.Duration
	concurrency int
	cacheLog    *CacheLog
	metrics     *Metrics
}

// fetch returns the digest of each file in objs, by key: from the cache in
// one call, the rest read from storage (concurrency at a time) and cached
// in one call. A file deleted since it was listed, or grown past
// skillmd.MaxSkillBytes, has none. tag is the hash tag of the library's
// cache keys.
func (d *digestReader) fetch(ctx context.Context, tag string, objs []objstore.Object) (map[string]Digest, error) {
	out := make(map[string]Digest, len(objs))
	if len(objs) == 0 {
		return out, nil
	}
	// A file without an ETag has no version to name in the cache: it is
	// hashed every time.
	keys := make([]string, len(objs))
	var named []string
	for i, o := range objs {
		if o.ETag != "" {
			keys[i] = digestCacheKey(tag, o.Key, listedVersion(o))
			named = append(named, keys[i])
		}
	}
	var hits map[string][]byte
	if len(named) > 0 {
		var err error
		if hits, err = d.cache.Fetch(ctx, named); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			d.cacheLog.Failed(ctx, "fetching skill file digests", err)
		}
	}
	var mu sync.Mutex
	computed := map[string][]byte{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.concurrency)
	for i, o := range objs {
		if dg, ok := decodeDigest(hits[keys[i]]); ok && keys[i] != "" {
			d.metrics.Digests.WithLabelValues(DigestCached).Inc()
			mu.Lock() // the reads started below write out too
			out[o.Key] = dg
			mu.Unlock()
			continue
		}
		g.Go(panics.Guard(func() error {
			dg, etag, binary, err := d.read(gctx, o)
			if objstore.IsNotFound(err) || errors.Is(err, errGrown) {
				return nil // deleted or grown past the limits since listed
			}
			if err != nil {
				return err
			}
			d.metrics.Digests.WithLabelValues(DigestComputed).Inc()
			d.metrics.DigestBytes.Add(float64(dg.Size))
			mu.Lock()
			defer mu.Unlock()
			out[o.Key] = dg
			if keys[i] != "" && etag == o.ETag && int64(dg.Size) == o.Size { // the version listed
				computed[keys[i]] = encodeDigest(dg)
				// What Files.Binary would read the file's head for.
				computed[sniffCacheKey(o.Key, o.ETag)] = sniffValue(binary)
			}
			return nil
		}))
	}
	err := g.Wait()
	// What was hashed is worth keeping even when another read failed.
	if len(computed) > 0 && ctx.Err() == nil {
		if serr := d.cache.Store(ctx, computed, d.ttl); serr != nil {
			d.cacheLog.Failed(ctx, "storing skill file digests", serr)
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errGrown: a file read past skillmd.MaxSkillBytes, which it was within
// when listed.
var errGrown = errors.New("file grew past the skill size limit since it was listed")

// read hashes o, reading at most skillmd.MaxSkillBytes (no file of a
// hashed skill is larger as listed), and tells whether it is binary. A file
// the contents cache holds is read through it, so what an index build
// hashed, GetSkill, ReadSkillFile and resources/read find cached; a larger
// one is streamed.
func (d *digestReader) read(ctx context.Context, o objstore.Object) (dg Digest, etag string, binary bool, err error) {
	if d.files != nil && d.files.cacheable(o) {
		data, a, whole, err := d.files.read(ctx, o)
		if err != nil {
			return Digest{}, "", false, err
		}
		if whole && int64(len(data)) > skillmd.MaxSkillBytes {
			return Digest{}, "", false, errGrown
		}
		if whole {
			head := data[:min(len(data), textfile.SniffBytes)]
			return Digest{Size: int32(len(data)), Sum: sha256.Sum256(data), Mode: filemode.Of(a.Mode, head)}, a.ETag, textfile.IsBinary(head, a.Size), nil
		}
		// Grown past what is cached since listed: streamed below.
	}
	rc, a, err := d.bucket.Get(ctx, o.Key)
	if err != nil {
		return Digest{}, "", false, err
	}
	defer rc.Close()
	h := sha256.New()
	head := &prefixWriter{max: textfile.SniffBytes}
	n, err := io.Copy(io.MultiWriter(h, head), io.LimitReader(rc, skillmd.MaxSkillBytes+1))
	switch {
	case err != nil:
		return Digest{}, "", false, err
	case n > skillmd.MaxSkillBytes:
		return Digest{}, "", false, errGrown
	}
	dg = Digest{Size: int32(n), Mode: filemode.Of(a.Mode, head.b)}
	h.Sum(dg.Sum[:0])
	return dg, a.ETag, textfile.IsBinary(head.b, n), nil
}

// prefixWriter keeps the first max bytes written to it.
type prefixWriter struct {
	b   []byte
	max int
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// encodeDigest is the cached form of a digest: the sum, then the size as a
// varint and the mode as a uvarint.
func encodeDigest(dg Digest) []byte {
	b := binary.AppendVarint(append(make([]byte, 0, digestBytes), dg.Sum[:]...), int64(dg.Size))
	return binary.AppendUvarint(b, uint64(dg.Mode))
}

// decodeDigest reads encodeDigest's form; anything else is a miss.
func decodeDigest(b []byte) (Digest, bool) {
	if len(b) <= sha256.Size {
		return Digest{}, false
	}
	var dg Digest
	copy(dg.Sum[:], b)
	size, n := binary.Varint(b[sha256.Size:])
	if n <= 0 || size < 0 || size > skillmd.MaxSkillBytes {
		return Digest{}, false
	}
	mode, m := binary.Uvarint(b[sha256.Size+n:])
	if m <= 0 || sha256.Size+n+m != len(b) || filemode.Normal(fs.FileMode(mode)) != fs.FileMode(mode) || mode == 0 {
		return Digest{}, false
	}
	dg.Size, dg.Mode = int32(size), fs.FileMode(mode)
	return dg, true
}
