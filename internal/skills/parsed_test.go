package skills

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"reflect"
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
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/views"
)

// parsedLibrary is a shared library of generated skills and awkward ones
// (typed extras, dates, big numbers, lists in metadata, a display name, an
// invalid skill), and alice's own few.
func parsedLibrary(shared int) map[string]string {
	files := tenantFiles(shared, 0, 0)
	for dir, md := range map[string]string{
		"legal/escritura": "---\nname: Escritura de Compraventa\ndescription: Drafts a deed of sale.\n---\n",
		"data/typed": "---\nname: typed\ndescription: Typed values.\nuser-invocable: false\npriority: 5\nweight: -2.5\n" +
			"released: 2024-01-02\nbig: 123456789012345678901234567890\nversion: 1.10\nallowed-tools: [Read, Grep]\n" +
			"hooks:\n  pre: lint\n  nested: {deeper: [1, {k: v}]}\nmetadata:\n  owner: data\n  tags: [a, b]\n" +
			"  owners:\n    - name: x\n      roles: [r1]\n  revision: 3\n---\n",
		"broken": "---\nname: broken\n---\n",
	} {
		files["_shared/skills/"+dir+"/SKILL.md"] = md
	}
	for _, n := range []string{"mine-a", "mine-b", "skill-0003"} {
		files["alice/skills/"+n+"/SKILL.md"] = skillMD(n)
	}
	return files
}

// parsedReplica is a fresh replica over b and the cache c, logging to
// log (debug included: a failing cache is a warning once a minute).
func parsedReplica(t *testing.T, b objstore.Bucket, c cache.Cache, log *logtest.Buffer) *Library {
	t.Helper()
	lib, err := New(b, mounts.Default(), DefaultConfig(), slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		WithCache(c), WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lib.Close)
	return lib
}

// headSources returns how many heads lib's layer builds took from each source.
func headSources(lib *Library) (carried, cached, parsed int) {
	n := func(src string) int { return int(testutil.ToFloat64(lib.metrics.Heads.WithLabelValues(src))) }
	return n(libindex.HeadCarried), n(libindex.HeadCached), n(libindex.HeadParsed)
}

var everything = skillview.ListOptions{IncludeInvalid: true, IncludeDisabled: true}

func listAll(t *testing.T, lib *Library) []skillview.Skill {
	t.Helper()
	list, err := lib.Catalog.Skills(t.Context(), alice, everything)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestParsedHeadsShared: a replica's first listing of a library another
// replica built decodes every head from Redis, parsing no YAML, and lists
// exactly what the first replica lists; a value in Redis that does not
// decode is parsed again (and replaced), never served or failed.
func TestParsedHeadsShared(t *testing.T) {
	const shared = 100
	// The awkward ones and alice's; her skill-0003 hides the shared one.
	const total = shared + 3 + 3
	b := objstoretest.NewBucket(t, parsedLibrary(shared))
	f := mismatchFixture{redis: testserver.SharedRedis(t).Addr, keys: "test-" + rand.Text() + ":"}

	var logA, logB logtest.Buffer
	a := parsedReplica(t, b, f.redisCache(t), &logA)
	want := listAll(t, a)
	if len(want) != total-1 {
		t.Fatalf("listed %d skills, want %d", len(want), total-1)
	}
	if carried, cached, parsed := headSources(a); carried != 0 || cached != 0 || parsed != total {
		t.Fatalf("first replica: %d carried, %d cached, %d parsed heads, want all %d parsed", carried, cached, parsed, total)
	}

	second := parsedReplica(t, b, f.redisCache(t), &logB)
	if got := listAll(t, second); !reflect.DeepEqual(got, want) {
		t.Fatalf("second replica lists\n%+v\nwant\n%+v", got, want)
	}
	if carried, cached, parsed := headSources(second); carried != 0 || cached != total || parsed != 0 {
		t.Fatalf("second replica: %d carried, %d cached, %d parsed heads, want all %d cached", carried, cached, parsed, total)
	}
	// An invalid skill is logged once per replica, whichever way its head
	// came.
	for name, log := range map[string]string{"first": logA.String(), "second": logB.String()} {
		if n := strings.Count(log, `msg="invalid skill"`); n != 1 || !strings.Contains(log, "skill=broken") {
			t.Errorf("%s replica logged %d invalid skills, want broken once:\n%s", name, n, log)
		}
	}
	var display, typed skillview.Skill
	for _, s := range want {
		switch s.Dir {
		case "legal/escritura":
			display = s
		case "data/typed":
			typed = s
		}
	}
	if display.Name != "escritura" || display.DisplayName != "Escritura de Compraventa" || typed.Extra["big"] != 1.2345678901234568e+29 || typed.Version != "1.10" {
		t.Fatalf("awkward skills listed as %+v and %+v", display, typed)
	}

	// Damage some of the values: each is parsed again, and replaced.
	damaged := map[string][]byte{}
	i := 0
	for _, s := range want {
		if s.Layer != skillview.LayerShared || i == 4 {
			continue
		}
		key := views.ParsedCacheKey(DefaultConfig().SharedPrefix+s.Dir+"/"+skillmd.SkillFile, s.ETag, s.Folder)
		good, err := skillmd.EncodeParsed(nil, s.Frontmatter, skillmd.Problems{})
		if err != nil {
			t.Fatal(err)
		}
		damaged[key] = [][]byte{[]byte("garbage"), good[:len(good)/2], append([]byte{skillmd.CodecVersion + 1}, good[1:]...), {}}[i]
		i++
	}
	if err := f.redisCache(t).Store(t.Context(), damaged, DefaultConfig().HeadTTL); err != nil {
		t.Fatal(err)
	}
	var logC logtest.Buffer
	third := parsedReplica(t, b, f.redisCache(t), &logC)
	if got := listAll(t, third); !reflect.DeepEqual(got, want) {
		t.Fatalf("with damaged values, a replica lists\n%+v\nwant\n%+v", got, want)
	}
	if _, cached, parsed := headSources(third); cached != total-len(damaged) || parsed != len(damaged) {
		t.Fatalf("with %d damaged values: %d cached, %d parsed heads", len(damaged), cached, parsed)
	}
	if !strings.Contains(logC.String(), "does not decode") {
		t.Errorf("damaged values not logged:\n%s", logC.String())
	}
	fourth := parsedReplica(t, b, f.redisCache(t), &logtest.Buffer{})
	listAll(t, fourth)
	if _, cached, parsed := headSources(fourth); cached != total || parsed != 0 {
		t.Fatalf("after the damaged values were parsed again: %d cached, %d parsed heads, want all cached", cached, parsed)
	}
}

// failingCache is a cache that is down: every call fails.
type failingCache struct{ cache.Cache }

func (failingCache) Fetch(context.Context, []string) (map[string][]byte, error) {
	return nil, fmt.Errorf("%w: down", cache.ErrUnavailable)
}

func (failingCache) Store(context.Context, map[string][]byte, time.Duration) error {
	return fmt.Errorf("%w: down", cache.ErrUnavailable)
}

// TestParsedHeadsCacheDown: with the cache failing, heads are parsed and
// the listing is whole.
func TestParsedHeadsCacheDown(t *testing.T) {
	b := objstoretest.NewBucket(t, parsedLibrary(10))
	want := listAll(t, parsedReplica(t, b, cache.NewLRU(1<<20), &logtest.Buffer{}))
	var log logtest.Buffer
	down := parsedReplica(t, b, failingCache{cache.NewLRU(1 << 20)}, &log)
	if got := listAll(t, down); !reflect.DeepEqual(got, want) {
		t.Fatalf("with the cache down, lists\n%+v\nwant\n%+v", got, want)
	}
	if _, cached, parsed := headSources(down); cached != 0 || parsed != 10+3+3 {
		t.Fatalf("with the cache down: %d cached, %d parsed heads, want all %d parsed", cached, parsed, 10+3+3)
	}
	if !strings.Contains(log.String(), "fetching parsed skill heads failed") {
		t.Errorf("the failed fetch is not logged:\n%s", log.String())
	}
}
