package skills_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

type benchPinKey struct{}

func benchPinned(ctx context.Context) context.Context {
	return context.WithValue(ctx, benchPinKey{}, true)
}

// pinBucket is a MinIO bucket holding a shared library of 300 skills (a
// SKILL.md of about 3 KiB, a reference and a script each: 900 files) and
// a user's library of 5.
func pinBucket(b *testing.B) objstore.Bucket {
	srv := testserver.SharedMinIO(b)
	bucket := s3.NewWithClient(srv.Client(b), srv.NewBucket(b))
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(32)
	put := func(key string, body []byte) error {
		_, err := bucket.Put(ctx, key, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{})
		return err
	}
	for i := range 305 {
		g.Go(func() error {
			name := fmt.Sprintf("skill-%04d", i)
			dir := fmt.Sprintf("_shared/skills/cat-%02d/%s/", i%20, name)
			if i >= 300 {
				dir = fmt.Sprintf("bench/skills/%s/", name)
			}
			if err := put(dir+"SKILL.md", benchBody(name)); err != nil {
				return err
			}
			if err := put(dir+"references/guide.md", []byte("# Reference\n\nDetails loaded only on demand for "+name+".\n")); err != nil {
				return err
			}
			return put(dir+"scripts/run.py", []byte("print('"+name+"')\n"))
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return bucket
}

// BenchmarkPinnedThread measures pinned threads on MinIO over a 300-skill
// shared library and a user's 5 skills (as deployed: index-refresh 5s):
//   - first-pin: a thread's first pinned call on a library state no
//     thread pinned before: the indexes are served warm, every one of the
//     915 files is copied into its blob space, the snapshot and the pin
//     written, the view built;
//   - new-thread: a new thread's first pinned call on the same state:
//     every blob is there (one listing of each space says so), so it
//     writes the pin (and a snapshot create that finds it there), reads
//     nothing else;
//   - warm: a pinned thread's next ListSkills, from memory;
//   - unpinned: the same ListSkills without the pin, for comparison.
func BenchmarkPinnedThread(b *testing.B) {
	bucket := pinBucket(b)
	newLib := func(b *testing.B) *skills.Library {
		cfg := skills.DefaultConfig()
		lib, err := skills.New(bucket, mounts.Default(), cfg, slog.New(slog.DiscardHandler),
			skills.WithPins(skills.DefaultPinConfig(), func(ctx context.Context) bool { return ctx.Value(benchPinKey{}) != nil }))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(lib.Close)
		return lib
	}
	thread := func(i int) mounts.Caller {
		return mounts.Default().MustIdentify(mounts.Identity{User: "bench", Thread: fmt.Sprintf("t%d", i)})
	}
	list := func(b *testing.B, lib *skills.Library, ctx context.Context, id mounts.Caller) {
		p, err := lib.Catalog.Page(ctx, id, skillview.ListOptions{}, 1000, "")
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Skills) != 305 {
			b.Fatalf("listed %d skills, want 305", len(p.Skills))
		}
	}
	clear := func(b *testing.B) {
		for _, prefix := range []string{"bench/versions/", "_shared/versions/"} {
			err := objstore.Walk(b.Context(), bucket, prefix, func(o objstore.Object) error { return bucket.Delete(b.Context(), o.Key) })
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	// The floor of a first pin: the 915 files read and written to other
	// keys, 32 at a time, without skillsvc.
	b.Run("copy-baseline", func(b *testing.B) {
		var keys []string
		if err := objstore.Walk(ctx, bucket, "", func(o objstore.Object) error { keys = append(keys, o.Key); return nil }); err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			n++
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(32)
			for _, k := range keys {
				g.Go(func() error {
					rc, a, err := bucket.Get(gctx, k)
					if err != nil {
						return err
					}
					defer rc.Close()
					_, err = bucket.Put(gctx, fmt.Sprintf("copy/%d/%s", n, k), rc, a.Size, objstore.PutOptions{IfNoneMatch: true})
					return err
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("first-pin", func(b *testing.B) {
		n := 0
		for b.Loop() {
			b.StopTimer()
			clear(b)
			lib := newLib(b)
			list(b, lib, ctx, thread(0)) // the indexes, warm
			n++
			b.StartTimer()
			list(b, lib, benchPinned(ctx), thread(n))
		}
	})
	b.Run("new-thread", func(b *testing.B) {
		lib := newLib(b)
		list(b, lib, benchPinned(ctx), thread(0))
		n := 0
		for b.Loop() {
			n++
			// Threads no other sub-benchmark pinned.
			list(b, lib, benchPinned(ctx), thread(1_000_000+n))
		}
	})
	b.Run("warm", func(b *testing.B) {
		lib := newLib(b)
		list(b, lib, benchPinned(ctx), thread(0))
		for b.Loop() {
			list(b, lib, benchPinned(ctx), thread(0))
		}
	})
	b.Run("unpinned", func(b *testing.B) {
		lib := newLib(b)
		list(b, lib, ctx, thread(0))
		for b.Loop() {
			list(b, lib, ctx, thread(0))
		}
	})
}
