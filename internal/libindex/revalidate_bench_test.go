package libindex

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// BenchmarkRevalidateUnchanged is what a library in use costs a replica
// without events each interval: one background revalidation of a user's
// unchanged library of 5 skills (a SKILL.md and a guide each, as
// bench-load seeds them) against a real MinIO, with the shared cache in a
// real Redis as deployed: the lock, the check for another replica's
// listing, the LIST, the comparison and the stamp.
func BenchmarkRevalidateUnchanged(b *testing.B) {
	srv := testserver.SharedMinIO(b)
	red := testserver.SharedRedis(b)
	bucket := s3.NewWithClient(srv.Client(b), srv.NewBucket(b))
	for j := range 5 {
		base := fmt.Sprintf("alice/skills/s%d/", j)
		objstoretest.Put(b, bucket, base+"SKILL.md", skillMD(fmt.Sprintf("s%d", j)))
		objstoretest.Put(b, bucket, base+"references/guide.md", "# Guide\n")
	}
	cfg := cache.DefaultConfig()
	cfg.Redis.Addrs = []string{red.Addr}
	cfg.Redis.KeyPrefix = fmt.Sprintf("%s:%d:", b.Name(), time.Now().UnixNano())
	c, err := cache.New(cfg, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	log := slog.New(slog.DiscardHandler)
	conf := testConfig(5 * time.Second)
	conf.IndexMaxStale = 30 * time.Second
	ix := New(bucket, c, conf, log, NewCacheLog(log), NewMetrics(nil))
	clk := &testClock{now: time.Now()}
	ix.SetNow(clk.Now)
	x, err := ix.Get(b.Context(), aliceLayer)
	if err != nil || len(x.Heads) != 5 {
		b.Fatalf("Get = %d skills, %v", len(x.Heads), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		// Past the interval, within the max staleness: the call is served
		// and the library revalidated in the background (waited for here).
		clk.Advance(conf.IndexMaxStale - conf.IndexRefresh)
		if _, err := ix.Get(b.Context(), aliceLayer); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
