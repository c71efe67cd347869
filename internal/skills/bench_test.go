package skills_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const benchSkills = 1000

// benchBody is a SKILL.md of a realistic size (about 3 KiB): frontmatter,
// then instructions that a listing never needs.
func benchBody(name string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\nname: %s\ndescription: Benchmark skill %s; extracts, converts and summarizes documents of its kind.\nlicense: Apache-2.0\nmetadata:\n  owner: bench\n---\n\n# %s\n\n", name, name, name)
	for i := 0; b.Len() < 3<<10; i++ {
		fmt.Fprintf(&b, "%d. Step %d of the procedure, with enough words to look like real instructions.\n", i+1, i+1)
	}
	return b.Bytes()
}

// benchBucket returns a MinIO bucket holding benchSkills skills in 20
// categories, each with a SKILL.md and a reference file. It seeds in
// parallel, as a sequential seed of 2,000 objects would dominate the run.
func benchBucket(b *testing.B) (objstore.Bucket, mounts.Caller) {
	srv := testserver.SharedMinIO(b)
	bucket := s3.NewWithClient(srv.Client(b), srv.NewBucket(b))
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(32)
	for i := range benchSkills {
		g.Go(func() error {
			name := fmt.Sprintf("skill-%04d", i)
			dir := fmt.Sprintf("bench/skills/cat-%02d/%s/", i%20, name)
			body := benchBody(name)
			if _, err := bucket.Put(ctx, dir+"SKILL.md", bytes.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
				return err
			}
			ref := []byte("# Reference\n\nDetails loaded only on demand.\n")
			_, err := bucket.Put(ctx, dir+"references/guide.md", bytes.NewReader(ref), int64(len(ref)), objstore.PutOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return bucket, mounts.Default().MustIdentify(mounts.Identity{User: "bench", Thread: "t"})
}

// BenchmarkListSkills1000 lists 1,000 skills on MinIO three ways:
//   - sequential: the naive baseline, one LIST then a full GET of each
//     SKILL.md, one after another;
//   - catalog: skillsvc with no cache (a new Library per iteration): one paged
//     LIST, then only the head of each SKILL.md, 32 in parallel;
//   - catalog-warm: one Library reused, so frontmatter parsed before is
//     reused by ETag and a listing costs the LISTs alone;
//   - catalog-indexed: as deployed (index-ttl 5s), the listing itself is
//     reused too, so repeated calls within the TTL cost no LIST.
func BenchmarkListSkills1000(b *testing.B) {
	bucket, id := benchBucket(b)
	ctx := context.Background()

	b.Run("sequential", func(b *testing.B) {
		for b.Loop() {
			n := 0
			err := objstore.Walk(ctx, bucket, "bench/skills/", func(o objstore.Object) error {
				if !bytes.HasSuffix([]byte(o.Key), []byte("/SKILL.md")) {
					return nil
				}
				rc, _, err := bucket.Get(ctx, o.Key)
				if err != nil {
					return err
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					return err
				}
				if fm, _, p := skillmd.ParseSkillMD(data, ""); p.Valid() && fm.Name != "" {
					n++
				}
				return nil
			})
			if err != nil || n != benchSkills {
				b.Fatalf("sequential listed %d skills, err %v", n, err)
			}
		}
	})
	b.Run("catalog", func(b *testing.B) {
		for b.Loop() {
			list, err := skillstest.Library(b, bucket, nil).Catalog.Skills(ctx, id, skillview.ListOptions{})
			if err != nil || len(list) != benchSkills {
				b.Fatalf("catalog listed %d skills, err %v", len(list), err)
			}
		}
	})
	for _, tc := range []struct {
		name string
		tune func(*skills.Config)
	}{
		{"catalog-warm", nil},
		{"catalog-indexed", skillstest.Indexed(5 * time.Second)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lib := skillstest.Library(b, bucket, tc.tune)
			if _, err := lib.Catalog.Skills(ctx, id, skillview.ListOptions{}); err != nil { // warm up
				b.Fatal(err)
			}
			for b.Loop() {
				list, err := lib.Catalog.Skills(ctx, id, skillview.ListOptions{})
				if err != nil || len(list) != benchSkills {
					b.Fatalf("catalog listed %d skills, err %v", len(list), err)
				}
			}
		})
	}
}

// BenchmarkTreeStat describes a path under /skills, as every VFS
// call under the skills mount does, in a 1,000-skill library whose listing
// is cached (index-refresh): the merged view is reused, not rebuilt per call.
func BenchmarkTreeStat(b *testing.B) {
	lb := skillstest.New()
	for i := range benchSkills {
		name := fmt.Sprintf("skill-%04d", i)
		lb.User("bench").File(fmt.Sprintf("cat-%02d/%s/SKILL.md", i%20, name), string(benchBody(name)))
	}
	lib := skillstest.Library(b, lb.Bucket(b), skillstest.Indexed(time.Hour))
	ctx := context.Background()
	id := mounts.Default().MustIdentify(mounts.Identity{User: "bench", Thread: "t"})
	if _, err := lib.Tree.Stat(ctx, id, "cat-01/skill-0001/SKILL.md"); err != nil { // warm up
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := lib.Tree.Stat(ctx, id, "cat-01/skill-0001/SKILL.md"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstListingWarmCache is a new replica's first ListSkills of
// 1,000 skills while the shared cache (an in-process one here, standing in
// for Redis) holds the index and the parsed heads another replica
// published: decoding the index and every head into the layer, without a
// storage request or a YAML parse (bench-load's "first ListSkills: new
// process, warm Redis").
func BenchmarkFirstListingWarmCache(b *testing.B) {
	lb := skillstest.New()
	for i := range benchSkills {
		name := fmt.Sprintf("skill-%04d", i)
		lb.User("bench").File(fmt.Sprintf("cat-%02d/%s/SKILL.md", i%20, name), string(benchBody(name)))
	}
	bucket := objstoretest.NewFaulty(lb.Bucket(b))
	shared := cache.NewLRU(256 << 20)
	id := mounts.Default().MustIdentify(mounts.Identity{User: "bench", Thread: "t"})
	list := func() {
		lib := skillstest.Library(b, bucket, skillstest.Indexed(time.Hour), skills.WithCache(shared))
		defer lib.Close()
		got, err := lib.Catalog.Skills(context.Background(), id, skillview.ListOptions{})
		if err != nil || len(got) != benchSkills {
			b.Fatalf("listed %d skills, err %v", len(got), err)
		}
	}
	list() // publishes the index
	lists := bucket.Calls(objstore.OpList)
	for b.Loop() {
		list()
	}
	if n := bucket.Calls(objstore.OpList) - lists; n != 0 {
		b.Fatalf("%d listings: the index was not taken from the cache", n)
	}
}
