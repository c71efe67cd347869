package libindex

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

// testConfig is a store's configuration; refresh 0 revalidates on every
// Get, so each Get is one index build.
func testConfig(refresh time.Duration) Config {
	return Config{
		IndexRefresh: refresh, IndexMaxStale: 2 * refresh, StaleIfError: time.Hour,
		MaxHeldBytes: 16 << 20, MaxObjects: 10_000, HeadTTL: time.Hour, HeadBytes: 4096, Concurrency: 4,
		MaxCachedFileBytes: 1 << 20,
	}
}

// newStore is a replica's store over b and c (nil: a cache of its own).
func newStore(t *testing.T, b objstore.Bucket, c cache.Cache, refresh time.Duration) (*Store, *Metrics) {
	t.Helper()
	if c == nil {
		c = cache.NewLRU(32 << 20)
	}
	log := slog.New(slog.DiscardHandler)
	m := NewMetrics(nil)
	ix := New(b, c, testConfig(refresh), log, NewCacheLog(log), m)
	t.Cleanup(ix.Close)
	return ix, m
}

// gets records the library files a bucket was asked to Get, which only
// hashing does (heads are ranged reads; the persisted index is no file).
type gets struct {
	mu   sync.Mutex
	keys []string
}

func recordGets(b *objstoretest.Faulty) *gets {
	g := &gets{}
	b.Before(objstore.OpGet, func(_ context.Context, c objstoretest.Call) error {
		if strings.HasPrefix(c.Key, aliceLayer.Prefix) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.keys = append(g.keys, c.Key)
		}
		return nil
	})
	return g
}

// take returns the keys recorded since the last take.
func (g *gets) take() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.keys
	g.keys = nil
	return k
}

func digestCount(m *Metrics, source string) int {
	return int(testutil.ToFloat64(m.Digests.WithLabelValues(source)))
}

// wantDigests checks that x holds the digest of exactly the files given
// (key → content).
func wantDigests(t *testing.T, x *Index, files map[string]string) {
	t.Helper()
	for key, content := range files {
		dg, ok := x.DigestOf(key)
		// The test buckets record no mode: a file is executable by its "#!".
		if want := (Digest{Size: int32(len(content)), Sum: sha256.Sum256([]byte(content)), Mode: filemode.Of(0, []byte(content))}); !ok || dg != want {
			t.Errorf("digest of %s = %x (%d bytes, mode %#o, held %t), want %x (%d bytes, mode %#o)", key, dg.Sum, dg.Size, dg.Mode, ok, want.Sum, want.Size, want.Mode)
		}
	}
	if len(x.Digests) != len(files) {
		var keys []string
		for _, d := range x.Digests {
			keys = append(keys, d.Key)
		}
		t.Errorf("index holds %d digests (%q), want %d", len(x.Digests), keys, len(files))
	}
}

var (
	skillA = "---\nname: a\ndescription: A.\n---\nbody\n"
	skillB = "---\nname: b\ndescription: B.\n---\nbody\n"
)

// TestDigestsOncePerETag: a build hashes each file of a skill once; a
// revalidation that finds one file changed hashes that file alone and
// carries the others over, on every backend.
func TestDigestsOncePerETag(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		files := map[string]string{
			"alice/skills/a/SKILL.md":      skillA,
			"alice/skills/a/scripts/x.py":  "print('x')\n",
			"alice/skills/a/empty.txt":     "",
			"alice/skills/b/SKILL.md":      skillB,
			"alice/skills/b/reference.md":  "# B\n",
			"alice/skills/notes.md":        "in no skill\n",
			"alice/skills/c/not-skill.txt": "a folder without SKILL.md\n",
		}
		b := objstoretest.NewFaulty(newBucket(t))
		for k, v := range files {
			objstoretest.Put(t, b, k, v)
		}
		hashed := recordGets(b)
		ix, m := newStore(t, b, nil, 0)
		x, err := ix.Get(t.Context(), aliceLayer)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for k, v := range files {
			if strings.HasPrefix(k, "alice/skills/a/") || strings.HasPrefix(k, "alice/skills/b/") {
				want[k] = v
			}
		}
		wantDigests(t, x, want)
		if got := hashed.take(); len(got) != len(want) {
			t.Errorf("the first build read %q, want each of the %d skill files once", got, len(want))
		}

		// Nothing changed: nothing is read again.
		if x, err = ix.Get(t.Context(), aliceLayer); err != nil {
			t.Fatal(err)
		}
		if got := hashed.take(); len(got) != 0 {
			t.Errorf("an unchanged revalidation read %q", got)
		}

		want["alice/skills/a/scripts/x.py"] = "print('changed')\n"
		objstoretest.Put(t, b, "alice/skills/a/scripts/x.py", want["alice/skills/a/scripts/x.py"])
		carried := digestCount(m, DigestCarried)
		if x, err = ix.Get(t.Context(), aliceLayer); err != nil {
			t.Fatal(err)
		}
		wantDigests(t, x, want)
		if got := hashed.take(); len(got) != 1 || got[0] != "alice/skills/a/scripts/x.py" {
			t.Errorf("revalidating one changed file read %q, want it alone", got)
		}
		if n := digestCount(m, DigestCarried) - carried; n != len(want)-1 {
			t.Errorf("%d digests carried over, want %d", n, len(want)-1)
		}
		if n := digestCount(m, DigestComputed); n != len(want)+1 {
			t.Errorf("%d digests computed in all, want %d (one per file, then the changed one)", n, len(want)+1)
		}
	})
}

// TestDigestsOverLimits: the files of a skill over the MCP extension's
// limits are never read, and the index holds no digest of them; a skill
// within them beside it is hashed.
func TestDigestsOverLimits(t *testing.T) {
	many := map[string]string{"alice/skills/many/SKILL.md": skillA}
	for i := range skillmd.MaxSkillFiles {
		many[fmt.Sprintf("alice/skills/many/f%03d.txt", i)] = "x"
	}
	large := map[string]string{
		"alice/skills/large/SKILL.md": skillA,
		"alice/skills/large/big.bin":  strings.Repeat("x", skillmd.MaxSkillBytes-len(skillA)+1),
	}
	atLimit := map[string]string{
		"alice/skills/full/SKILL.md": skillA,
		"alice/skills/full/big.bin":  strings.Repeat("x", skillmd.MaxSkillBytes-len(skillA)),
	}
	small := map[string]string{"alice/skills/small/SKILL.md": skillB}
	for _, tc := range []struct {
		name         string
		over, within map[string]string
	}{
		{"more than MaxSkillFiles files", many, small},
		{"more than MaxSkillBytes bytes", large, small},
		{"exactly MaxSkillBytes bytes", nil, atLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := objstoretest.NewFaulty(objstoretest.NewBucket(t, nil))
			for _, files := range []map[string]string{tc.over, tc.within} {
				for k, v := range files {
					objstoretest.Put(t, b, k, v)
				}
			}
			hashed := recordGets(b)
			ix, _ := newStore(t, b, nil, 0)
			x, err := ix.Get(t.Context(), aliceLayer)
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Heads) != 2 && tc.over != nil {
				t.Errorf("index holds %d heads, want both skills'", len(x.Heads))
			}
			wantDigests(t, x, tc.within)
			for _, k := range hashed.take() {
				if _, ok := tc.over[k]; ok {
					t.Errorf("read %s of a skill over the limits", k)
				}
			}
		})
	}
}

// TestDigestsShared: the digests a build computed reach another replica
// in the index from Redis, a replica without the cache in the persisted
// index, and a rebuild after an operator dropped the index from the
// content-addressed digest cache: none of them reads a file again.
func TestDigestsShared(t *testing.T) {
	files := map[string]string{
		"alice/skills/a/SKILL.md":     skillA,
		"alice/skills/a/scripts/x.py": "print('x')\n",
		"alice/skills/b/SKILL.md":     skillB,
	}
	mem := objstoretest.NewBucket(t, files)
	redisCfg := cache.DefaultConfig()
	redisCfg.Redis.Addrs = []string{testserver.SharedRedis(t).Addr}
	redisCfg.Redis.KeyPrefix = "test-" + rand.Text() + ":"
	redis := func(t *testing.T) cache.Cache {
		c, err := cache.New(redisCfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	replica := func(c cache.Cache) (*Store, *gets, *Metrics) {
		b := objstoretest.NewFaulty(mem)
		g := recordGets(b)
		ix, m := newStore(t, b, c, time.Hour)
		return ix, g, m
	}

	a, aGets, _ := replica(redis(t))
	x, err := a.Get(t.Context(), aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	wantDigests(t, x, files)
	if got := aGets.take(); len(got) != len(files) {
		t.Fatalf("replica A read %q, want each file once", got)
	}

	for _, tc := range []struct {
		name  string
		cache cache.Cache
	}{
		{"from Redis", redis(t)},
		{"persisted", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, g, m := replica(tc.cache)
			y, err := r.Get(t.Context(), aliceLayer)
			if err != nil {
				t.Fatal(err)
			}
			wantDigests(t, y, files)
			if got := g.take(); len(got) != 0 || digestCount(m, DigestComputed) != 0 {
				t.Errorf("read %q to hash, want the index's digests", got)
			}
		})
	}

	t.Run("dropped", func(t *testing.T) {
		if err := a.Drop(t.Context(), aliceLayer); err != nil {
			t.Fatal(err)
		}
		r, g, m := replica(redis(t))
		y, err := r.Get(t.Context(), aliceLayer)
		if err != nil {
			t.Fatal(err)
		}
		wantDigests(t, y, files)
		if got := g.take(); len(got) != 0 {
			t.Errorf("read %q to hash after a drop, want the cached digests", got)
		}
		if n := digestCount(m, DigestCached); n != len(files) {
			t.Errorf("%d digests from the cache, want %d", n, len(files))
		}
	})
}

// TestHashingFillsTheFileCache: what a build hashed is what later reads
// get: each file's content (within the cacheable size) and whether it is
// binary come from the cache, with no storage read.
func TestHashingFillsTheFileCache(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		files := map[string]string{
			"alice/skills/a/SKILL.md":        skillA,
			"alice/skills/a/scripts/x.py":    "print('x')\n",
			"alice/skills/a/assets/logo.png": "\x89PNG\r\n\x1a\n\x00\x00\xff",
			"alice/skills/a/empty.txt":       "",
		}
		b := objstoretest.NewFaulty(newBucket(t))
		for k, v := range files {
			objstoretest.Put(t, b, k, v)
		}
		ix, _ := newStore(t, b, nil, time.Hour)
		x, err := ix.Get(t.Context(), aliceLayer)
		if err != nil {
			t.Fatal(err)
		}
		var reads atomic.Int64
		for _, op := range []string{objstore.OpGet, objstore.OpGetRange} {
			b.Before(op, func(context.Context, objstoretest.Call) error { reads.Add(1); return nil })
		}
		var objs []objstore.Object
		for _, o := range x.Objs {
			if _, ok := files[o.Key]; ok {
				objs = append(objs, o)
			}
		}
		kinds, err := ix.Files().Binary(t.Context(), objs, 4)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range objs {
			if want := strings.HasSuffix(o.Key, ".png"); kinds[i] != want {
				t.Errorf("%s: binary %t, want %t", o.Key, kinds[i], want)
			}
			rc, _, err := ix.Files().Open(t.Context(), o, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || string(data) != files[o.Key] {
				t.Errorf("%s: read %q (%v), want %q", o.Key, data, err, files[o.Key])
			}
		}
		if len(objs) != len(files) {
			t.Fatalf("index lists %d of the %d files", len(objs), len(files))
		}
		if n := reads.Load(); n != 0 {
			t.Errorf("reading and sniffing the hashed files made %d storage reads, want 0", n)
		}
	})
}
