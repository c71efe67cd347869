package skillarchive

import (
	"context"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
)

// Version names the bytes Repack writes for given files: it changes
// whenever they would change (a header field, the compression level), so
// no replica serves a digest another build's archives do not have. It is
// in the cache keys of the digests and of the replies that carry them.
const Version = "v1"

// keySpace names the digests in the shared cache.
const keySpace = "archive:" + Version + ":"

// ttl is how long a digest stays cached: a skill's content that nobody
// asks for again is packed again after it.
const ttl = 24 * time.Hour

// Digests keeps the digest of each root-layout archive by the manifest
// digest of the files packed (skillmd.ManifestDigest, which covers every
// path and its bytes), in the cache shared by the replicas: the same
// content makes the same archive, so a digest learned once is every
// replica's.
type Digests struct {
	c cache.Cache
}

// NewDigests keeps the digests in c (nil: an in-process cache of 1 MiB).
func NewDigests(c cache.Cache) *Digests {
	if c == nil {
		c = cache.NewLRU(1 << 20)
	}
	return &Digests{c: c}
}

// Lookup returns the cached archive digests of the manifests named, by
// manifest digest. The cache failing is a miss, never an error: the
// caller packs the skill instead.
func (d *Digests) Lookup(ctx context.Context, manifests []string) map[string]string {
	keys := make([]string, 0, len(manifests))
	for _, m := range manifests {
		if m != "" {
			keys = append(keys, keySpace+m)
		}
	}
	out := make(map[string]string, len(keys))
	if len(keys) == 0 {
		return out
	}
	hits, err := d.c.Fetch(ctx, keys)
	if err != nil {
		return out
	}
	for k, v := range hits {
		if s := string(v); strings.HasPrefix(s, "sha256:") && len(s) == len("sha256:")+64 {
			out[strings.TrimPrefix(k, keySpace)] = s
		}
	}
	return out
}

// Store keeps digest as the archive digest of the files manifest names.
// A failure to store only costs a later pack.
func (d *Digests) Store(ctx context.Context, manifest, digest string) {
	if manifest == "" {
		return
	}
	_ = d.c.Store(ctx, map[string][]byte{keySpace + manifest: []byte(digest)}, ttl)
}
