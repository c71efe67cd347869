package skills

import (
	"crypto/rand"
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestForeignDeploymentInRedis: another deployment's entries written under
// this deployment's keys (a binary without a keyspace whose key prefix ends
// where this one's keyspace does) are refused and counted: alice's listing
// and her settings come from her own bucket, where the library-only owner
// check alone would have served the other's index (the same user, the same
// library prefix) and its disabled skill.
func TestForeignDeploymentInRedis(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	prefix := "test-" + rand.Text() + ":"
	ours := cache.NewKeyspace("s3\x00" + srv.Endpoint + "\x00ours")
	newBucket := func(skill string) objstore.Bucket {
		b := s3.NewWithClient(srv.Client(t), srv.NewBucket(t))
		objstoretest.Put(t, b, "alice/skills/"+skill+"/SKILL.md", skillMD(skill))
		objstoretest.Put(t, b, "alice/skills/shared-name/SKILL.md", skillMD("shared-name"))
		return b
	}
	replica := func(b objstore.Bucket, cfg cache.RedisConfig, reg *prometheus.Registry) *Library {
		c, err := cache.New(cache.Config{LRU: cache.DefaultConfig().LRU, Redis: cfg}, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		lib, err := New(b, mounts.Default(), DefaultConfig(), slog.New(slog.NewTextHandler(io.Discard, nil)),
			WithCache(c), WithRegisterer(reg))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lib.Close)
		return lib
	}
	redisCfg := cache.DefaultConfig().Redis
	redisCfg.Addrs = []string{red.Addr}

	// The other deployment fills alice's keys first, with a skill disabled.
	other := redisCfg
	other.KeyPrefix = prefix + "d" + ours.String() + ":"
	theirs := replica(newBucket("theirs"), other, prometheus.NewRegistry())
	if _, err := theirs.Catalog.SetEnabled(t.Context(), alice, "shared-name", false); err != nil {
		t.Fatal(err)
	}
	if got := namesOf(t, theirs, alice); got != "shared-name(disabled),theirs" {
		t.Fatalf("the other deployment lists %q", got)
	}

	own := redisCfg
	own.KeyPrefix, own.Keyspace = prefix, ours
	reg := prometheus.NewRegistry()
	lib := replica(newBucket("mine"), own, reg)
	if got := namesOf(t, lib, alice); got != "mine,shared-name" {
		t.Fatalf("alice lists %q; want her own bucket's skills, none disabled", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var foreign float64
	for _, mf := range mfs {
		if mf.GetName() == "skillsvc_cache_foreign_values_total" {
			foreign = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if foreign == 0 {
		t.Error("skillsvc_cache_foreign_values_total = 0; want the other deployment's values counted")
	}
}
