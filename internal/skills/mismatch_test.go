package skills

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/logtest"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

var bob = mounts.Default().MustIdentify(mounts.Identity{User: "bob", Thread: "t1"})

// mismatchFixture is a MinIO bucket where alice has the skill "mine" and
// bob three of his own, and a Redis key space every replica of the test
// shares.
type mismatchFixture struct {
	bucket objstore.Bucket
	redis  string // address
	keys   string // the test's key prefix in Redis
}

func newMismatchFixture(t *testing.T) mismatchFixture {
	t.Helper()
	srv := testserver.SharedMinIO(t)
	b := s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
	objstoretest.Put(t, b, "alice/skills/mine/SKILL.md", skillMD("mine"))
	for _, n := range []string{"bob1", "bob2", "bob3"} {
		objstoretest.Put(t, b, "bob/skills/"+n+"/SKILL.md", skillMD(n))
	}
	return mismatchFixture{bucket: b, redis: testserver.SharedRedis(t).Addr, keys: "test-" + rand.Text() + ":"}
}

// redisCache returns a client of the fixture's Redis key space, the stack
// cmd/skillsvc builds with --cache.redis.addrs; cache.Shared of it is Redis
// alone, without the process level in front.
func (f mismatchFixture) redisCache(t *testing.T) cache.Cache {
	t.Helper()
	cfg := cache.DefaultConfig()
	cfg.Redis.Addrs = []string{f.redis}
	cfg.Redis.KeyPrefix = f.keys
	c, err := cache.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// replica is a fresh replica (nothing in process) as deployed, over the
// fixture's bucket and Redis, logging to log.
func (f mismatchFixture) replica(t *testing.T, b objstore.Bucket, log io.Writer) *Library {
	t.Helper()
	lib, err := New(b, mounts.Default(), DefaultConfig(), slog.New(slog.NewTextHandler(log, nil)),
		WithCache(f.redisCache(t)), WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lib.Close)
	return lib
}

// userLayers are alice's and bob's own library layers in lib.
func userLayers(t *testing.T, lib *Library) (alice, bob libindex.Layer) {
	t.Helper()
	own := func(user string) libindex.Layer {
		l, _, err := lib.Catalog.views.UserLayers(user)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	return own("alice"), own("bob")
}

func namesOf(t *testing.T, lib *Library, id mounts.Caller) string {
	t.Helper()
	list, err := lib.Catalog.Skills(t.Context(), id, skillview.ListOptions{IncludeDisabled: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		name := s.Name
		if s.Disabled {
			name += "(disabled)"
		}
		out = append(out, name)
	}
	return strings.Join(out, ",")
}

// TestMismatchedIndexInRedis: bob's library index copied under alice's keys
// in Redis (both the index and its stamp, or the index alone) is not served
// to alice: her listing shows her own skill only, the mismatch is counted
// and logged, her library is listed again, and her keys then hold her own.
func TestMismatchedIndexInRedis(t *testing.T) {
	for _, tc := range []struct {
		name       string
		copyStamp  bool
		aliceFirst bool // alice's own index and stamp are in Redis before the copy
	}{
		{"index and stamp", true, false},
		{"index alone", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMismatchFixture(t)
			warm := f.replica(t, f.bucket, io.Discard)
			if got := namesOf(t, warm, bob); got != "bob1,bob2,bob3" {
				t.Fatalf("bob's skills = %q", got)
			}
			if tc.aliceFirst {
				namesOf(t, warm, alice)
			}
			aliceL, bobL := userLayers(t, warm)
			rc := cache.Shared(f.redisCache(t))
			copied := map[string]string{libindex.IndexKey(bobL): libindex.IndexKey(aliceL)}
			if tc.copyStamp {
				copied[libindex.StampKey(bobL)] = libindex.StampKey(aliceL)
			}
			copyKeys(t, rc, copied)

			var logs logtest.Buffer
			fb := objstoretest.NewFaulty(f.bucket)
			lib := f.replica(t, fb, &logs)
			if got := namesOf(t, lib, alice); got != "mine" {
				t.Errorf("alice's skills = %q, want only her own", got)
			}
			if n := testutil.ToFloat64(lib.metrics.Mismatched.WithLabelValues(libindex.KindIndex, libindex.SourceSharedCache)); n != 1 {
				t.Errorf("mismatched{index, shared_cache} = %v, want 1", n)
			}
			if lists := fb.Calls(objstore.OpList); lists != 1 {
				t.Errorf("%d List calls, want 1: alice's library listed again (the shared one from Redis)", lists)
			}
			if !strings.Contains(logs.String(), "level=WARN msg=\"skills cache: ignoring a value found under another's key") || !strings.Contains(logs.String(), "bob/skills/") {
				t.Errorf("no warning naming the other library:\n%s", logs.String())
			}

			// Her keys now hold her own index and stamp.
			hits, err := rc.Fetch(t.Context(), []string{libindex.IndexKey(aliceL), libindex.StampKey(aliceL)})
			if err != nil {
				t.Fatal(err)
			}
			x, err := libindex.DecodeIndex(hits[libindex.IndexKey(aliceL)], aliceL, 10)
			if err != nil || len(x.Objs) != 1 || x.Objs[0].Key != "alice/skills/mine/SKILL.md" {
				t.Errorf("alice's cached index after the listing: %+v, %v", x, err)
			}
			if _, err := libindex.DecodeStamp(hits[libindex.StampKey(aliceL)], aliceL); err != nil {
				t.Errorf("alice's cached stamp after the listing: %v", err)
			}
			// And another fresh replica serves her from it.
			if got := namesOf(t, f.replica(t, f.bucket, io.Discard), alice); got != "mine" {
				t.Errorf("next replica: alice's skills = %q", got)
			}
		})
	}
}

// TestMismatchedPersistedIndex: bob's persisted index object copied over
// alice's in the bucket is not served to a replica with an empty cache: her
// own skill only, counted and logged, listed again and persisted over.
func TestMismatchedPersistedIndex(t *testing.T) {
	f := newMismatchFixture(t)
	warm := f.replica(t, f.bucket, io.Discard)
	namesOf(t, warm, bob)
	namesOf(t, warm, alice)
	aliceL, bobL := userLayers(t, warm)
	objstoretest.Put(t, f.bucket, aliceL.Object, objstoretest.Get(t, f.bucket, bobL.Object))

	var logs logtest.Buffer
	f.keys = "test-" + rand.Text() + ":" // an empty cache: the bucket is all there is
	fb := objstoretest.NewFaulty(f.bucket)
	lib := f.replica(t, fb, &logs)
	if got := namesOf(t, lib, alice); got != "mine" {
		t.Errorf("alice's skills = %q, want only her own", got)
	}
	if n := testutil.ToFloat64(lib.metrics.Mismatched.WithLabelValues(libindex.KindIndex, libindex.SourceBucket)); n != 1 {
		t.Errorf("mismatched{index, persisted} = %v, want 1", n)
	}
	if !strings.Contains(logs.String(), "ignoring a value found under another's key") {
		t.Errorf("no warning:\n%s", logs.String())
	}
	x, err := libindex.DecodeIndex([]byte(objstoretest.Get(t, f.bucket, aliceL.Object)), aliceL, 10)
	if err != nil || len(x.Objs) != 1 || x.Objs[0].Key != "alice/skills/mine/SKILL.md" {
		t.Errorf("alice's persisted index after the listing: %+v, %v", x, err)
	}
}

// TestMismatchedSettingsInRedis: bob's cached settings (he disabled a skill
// alice has too) copied under alice's key are not applied to her: her skill
// stays enabled, the mismatch is counted and logged, and her key then holds
// her own settings.
func TestMismatchedSettingsInRedis(t *testing.T) {
	f := newMismatchFixture(t)
	objstoretest.Put(t, f.bucket, "bob/skills/mine/SKILL.md", skillMD("mine"))
	warm := f.replica(t, f.bucket, io.Discard)
	if _, err := warm.Catalog.SetEnabled(t.Context(), bob, "mine", false); err != nil {
		t.Fatal(err)
	}
	if got := namesOf(t, warm, bob); got != "bob1,bob2,bob3,mine(disabled)" {
		t.Fatalf("bob's skills = %q", got)
	}
	rc := cache.Shared(f.redisCache(t))
	copyKeys(t, rc, map[string]string{settings.CacheKey("bob"): settings.CacheKey("alice")})

	var logs logtest.Buffer
	lib := f.replica(t, f.bucket, &logs)
	if got := namesOf(t, lib, alice); got != "mine" {
		t.Errorf("alice's skills = %q, want hers enabled", got)
	}
	if n := testutil.ToFloat64(lib.metrics.Mismatched.WithLabelValues(libindex.KindSettings, libindex.SourceSharedCache)); n != 1 {
		t.Errorf("mismatched{settings, shared_cache} = %v, want 1", n)
	}
	if !strings.Contains(logs.String(), "ignoring a value found under another's key") {
		t.Errorf("no warning:\n%s", logs.String())
	}
	hits, err := rc.Fetch(t.Context(), []string{settings.CacheKey("alice")})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		User     string   `json:"user"`
		Disabled []string `json:"disabled"`
	}
	if err := json.Unmarshal(hits[settings.CacheKey("alice")], &s); err != nil || s.User != "alice" || len(s.Disabled) != 0 {
		t.Errorf("alice's cached settings after the read: %+v, %v", s, err)
	}
}

// copyKeys stores the value of each key in c under the key it maps to.
func copyKeys(t *testing.T, c cache.Cache, from map[string]string) {
	t.Helper()
	var keys []string
	for k := range from {
		keys = append(keys, k)
	}
	hits, err := c.Fetch(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for k, to := range from {
		v, ok := hits[k]
		if !ok {
			t.Fatalf("%s is not in the cache", k)
		}
		out[to] = v
	}
	if err := c.Store(t.Context(), out, time.Hour); err != nil {
		t.Fatal(err)
	}
}
