package library_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// TestPublishAtomic and TestVersionsPaged run on both backends, as
// TestLibrary.
func TestPublishAtomic(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		t.Run("RefusedPartWay", func(t *testing.T) { testRefusedPartWay(t, newBucket) })
		t.Run("CanceledPartWay", func(t *testing.T) { testCanceledPartWay(t, newBucket) })
		t.Run("Recovered", func(t *testing.T) {
			f := objstoretest.NewFaulty(newBucket(t))
			testRecovered(t, newEnv(t, f, nil), f)
		})
		t.Run("KeyTooLong", func(t *testing.T) {
			f := objstoretest.NewFaulty(newBucket(t))
			testKeyTooLong(t, newEnv(t, f, nil), f)
		})
	})
}

// version k of skill "mix": SKILL.md and three files, each saying k.
func mixVersion(k int) []skillmd.File {
	return folder("mix", fmt.Sprintf("version %d", k), "a.md", fmt.Sprint(k), "b.md", fmt.Sprint(k), "references/c.md", fmt.Sprint(k))
}

// liveVersion says which version alice's live copy of "mix" is, failing
// the test if it mixes versions or misses a file.
func liveVersion(t *testing.T, b objstore.Bucket) int {
	t.Helper()
	got := map[string]string{}
	for _, k := range keys(t, b) {
		if rel, ok := strings.CutPrefix(k, "alice/skills/mix/"); ok {
			got[rel] = objstoretest.Get(t, b, k)
		}
	}
	var k int
	if _, err := fmt.Sscanf(got["SKILL.md"], "---\nname: mix\ndescription: version %d", &k); err != nil {
		t.Fatalf("live copy %q: no SKILL.md of a version", got)
	}
	want := map[string]string{}
	for _, f := range mixVersion(k) {
		want[f.Path] = string(f.Data)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("live copy mixes versions: %q, SKILL.md of version %d", got, k)
	}
	return k
}

// testRefusedPartWay: whichever write of a publish storage refuses, and
// however often, the live copy is then version 1 or 2, whole; a publish
// that answered success is version 2 at once, and one that failed left
// version 1.
func testRefusedPartWay(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
	for _, times := range []int{1, 5} {
		for n := 1; ; n++ {
			f := objstoretest.NewFaulty(newBucket(t))
			e := newEnv(t, f, nil)
			if _, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "mix", Files: mixVersion(1)}); err != nil {
				t.Fatal(err)
			}
			var puts, refused atomic.Int64
			f.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
				if puts.Add(1) >= int64(n) && refused.Add(1) <= int64(times) {
					return objstore.ErrUnavailable
				}
				return nil
			})
			_, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "mix", Files: mixVersion(2)})
			f.Heal()
			if refused.Load() == 0 {
				break // past the publish's last write
			}
			// Refused once, the publish ends whole; refused for longer,
			// once recovery ran.
			if times > 1 {
				if _, err := e.pub.Recover(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			k := liveVersion(t, f)
			if (err == nil) != (k == 2) {
				t.Fatalf("put %d refused %d times: publish answered %v, live copy is version %d", n, times, err, k)
			}
			if n > 40 {
				t.Fatal("a publish of four files made over 40 writes")
			}
		}
	}
}

// testCanceledPartWay: a caller gone at any write of a publish leaves the
// live copy version 1 or 2, whole.
func testCanceledPartWay(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
	for n := 1; ; n++ {
		f := objstoretest.NewFaulty(newBucket(t))
		e := newEnv(t, f, nil)
		if _, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "mix", Files: mixVersion(1)}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var puts atomic.Int64
		f.Before(objstore.OpPut, func(context.Context, objstoretest.Call) error {
			if puts.Add(1) == int64(n) {
				cancel()
			}
			return nil
		})
		_, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "mix", Files: mixVersion(2)})
		cancel()
		if puts.Load() < int64(n) {
			break
		}
		if k := liveVersion(t, f); (err == nil) != (k == 2) {
			t.Fatalf("canceled at put %d: publish answered %v, live copy is version %d", n, err, k)
		}
	}
}

// testRecovered: a publish whose live writes storage keeps refusing past
// its commit answers success (it is committed), and the live copy is
// finished whole by the next change of the skill, or by Recover.
func testRecovered(t *testing.T, e env, f *objstoretest.Faulty) {
	ctx := t.Context()
	if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "mix", Files: mixVersion(1)}); err != nil {
		t.Fatal(err)
	}
	outage := func() {
		var live atomic.Int64
		f.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
			// Storage fails after the first live file is written.
			if strings.HasPrefix(c.Key, "alice/skills/mix/") && live.Add(1) > 1 {
				return objstore.ErrUnavailable
			}
			return nil
		})
	}
	outage()
	res, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "mix", Files: mixVersion(2)})
	if err != nil {
		t.Fatalf("a committed publish answered %v", err)
	}
	if !slices.Contains(res.Version.Labels, versions.Latest) {
		t.Fatalf("labels %q", res.Version.Labels)
	}
	f.Heal()
	if n, err := e.pub.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("Recover finished %d, %v; want 1", n, err)
	}
	if k := liveVersion(t, f); k != 2 {
		t.Fatalf("after recovery the live copy is version %d", k)
	}
	if got := e.listed(t, "alice")["mix@user"]; got != res.Version.ID {
		t.Fatalf("catalog lists %q, want %q", got, res.Version.ID)
	}
	if n, err := e.pub.Recover(ctx); err != nil || n != 0 {
		t.Fatalf("Recover again finished %d, %v", n, err)
	}

	// Interrupted again, then finished by the next change before its own.
	outage()
	if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "mix", Files: mixVersion(3)}); err != nil {
		t.Fatal(err)
	}
	f.Heal()
	page, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: "mix"})
	if err != nil || len(page.Versions) != 3 {
		t.Fatalf("%d versions, %v", len(page.Versions), err)
	}
	if _, err := e.pub.Rollback(ctx, alice, layout.LibraryRef{}, "mix", page.Versions[2].ID, ""); err != nil {
		t.Fatal(err)
	}
	if k := liveVersion(t, f); k != 1 {
		t.Fatalf("after the rollback to version 1 the live copy is version %d", k)
	}
	if n, err := e.pub.Recover(ctx); err != nil || n != 0 {
		t.Fatalf("Recover after the rollback finished %d, %v: the rollback left an intent", n, err)
	}
}

// testKeyTooLong: a file whose live key would pass S3's 1,024 bytes is
// INVALID_ARGUMENT naming the limit, before anything is written.
func testKeyTooLong(t *testing.T, e env, f *objstoretest.Faulty) {
	seg := strings.Repeat("x", 250)
	long := seg + "/" + seg + "/" + seg + "/" + seg + "/" + seg[:15] + ".md" // 1,022 bytes: a valid path
	var wrote []string
	f.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
		if strings.Contains(c.Key, "/versions/") || strings.Contains(c.Key, "/mix/") {
			wrote = append(wrote, c.Key) // not the catalog's own index
		}
		return nil
	})
	_, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "mix", Files: folder("mix", "d", long, "1")})
	wantKind(t, err, errkind.InvalidArgument)
	if !strings.Contains(err.Error(), "1024-byte limit") {
		t.Fatalf("err %q names no limit", err)
	}
	if len(wrote) != 0 {
		t.Fatalf("written before the refusal: %q", wrote)
	}
}

func TestVersionsPaged(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		f := objstoretest.NewFaulty(newBucket(t))
		testVersionsPaged(t, newEnv(t, f, func(c *library.Config) { c.Review = true }), f)
	})
}

// testVersionsPaged: a page of a skill's versions reads the records of
// that page only, however many versions the skill has, newest first across
// pages; records stored before the order markers are listed too, in order,
// after one pass that gives them theirs.
func testVersionsPaged(t *testing.T, e env, f *objstoretest.Faulty) {
	ctx := t.Context()
	var reads atomic.Int64
	f.Before(objstore.OpGet, func(_ context.Context, c objstoretest.Call) error {
		if strings.Contains(c.Key, "/v/") && strings.HasSuffix(c.Key, ".json") {
			reads.Add(1)
		}
		return nil
	})
	publish := func(name string, k int) string {
		t.Helper()
		res, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: name, Files: folder(name, fmt.Sprint("v", k))})
		if err != nil {
			t.Fatal(err)
		}
		return res.Version.ID
	}
	const size = 4
	// all lists name's versions page by page, checking each page's reads.
	all := func(name string, perPage int64) []string {
		t.Helper()
		var ids []string
		token := ""
		for {
			before := reads.Load()
			page, err := e.pub.ListVersions(ctx, alice, library.ListRequest{Name: name, PageSize: size, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			if got := reads.Load() - before; perPage >= 0 && got > perPage {
				t.Fatalf("a page of %d read %d records", size, got)
			}
			for _, v := range page.Versions {
				ids = append(ids, v.ID)
			}
			if token = page.Next; token == "" {
				return ids
			}
		}
	}
	for _, n := range []int{9, 30} {
		name := fmt.Sprint("p", n)
		var want []string
		for k := range n {
			want = append([]string{publish(name, k)}, want...)
		}
		all(name, -1) // the first listing of a skill notes it is ordered
		if got := all(name, size); !slices.Equal(got, want) {
			t.Fatalf("%d versions listed as %d: %q, want %q", n, len(got), got, want)
		}
	}

	// Records from before the markers: their markers and the refs' note
	// removed, as an older release stored them.
	name := "p9"
	orig := all(name, size)
	for _, k := range keys(t, f) {
		if strings.Contains(k, "/skills/"+name+"/t/") {
			if err := f.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	refsKey := "alice/versions/skills/" + name + "/refs.json"
	var refs map[string]any
	if err := json.Unmarshal([]byte(objstoretest.Get(t, f, refsKey)), &refs); err != nil {
		t.Fatal(err)
	}
	delete(refs, "ordered")
	b, _ := json.Marshal(refs)
	objstoretest.Put(t, f, refsKey, string(b))
	if got := all(name, -1); !slices.Equal(got, orig) {
		t.Fatalf("legacy records listed as %q, want %q", got, orig)
	}
	before := reads.Load()
	if again := all(name, size); !slices.Equal(again, orig) {
		t.Fatalf("listed %q, want %q", again, orig)
	}
	if got := reads.Load() - before; got != 9 {
		t.Fatalf("listing 9 versions again read %d records", got)
	}
}

// TestVersionPageBytes: a page of versions ends once its records pass
// --skills.max-page-bytes (here one byte: one version a page), with a
// token that goes on where it ended.
func TestVersionPageBytes(t *testing.T) {
	b := objstoretest.NewBucket(t, nil)
	lib := skillstest.Library(t, b, func(c *skills.Config) { skillstest.Indexed(time.Hour)(c); c.MaxPageBytes = 1 })
	t.Cleanup(lib.Close)
	pub := library.New(b, lib.Catalog, library.DefaultConfig(), cache.NewLRU(1<<20))
	var want []string
	for k := range 3 {
		res, err := pub.Publish(t.Context(), alice, library.PublishRequest{Name: "big", Files: folder("big", fmt.Sprint(k))})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{res.Version.ID}, want...)
	}
	var got []string
	for token, pages := "", 0; ; pages++ {
		page, err := pub.ListVersions(t.Context(), alice, library.ListRequest{Name: "big", PageSize: 10, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Versions) != 1 && pages < 3 {
			t.Fatalf("page %d holds %d versions", pages, len(page.Versions))
		}
		for _, v := range page.Versions {
			got = append(got, v.ID)
		}
		if token = page.Next; token == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
}
