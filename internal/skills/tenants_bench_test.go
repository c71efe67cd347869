package skills_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// The many-tenants shape of issue 22: a shared library of tenantShared
// skills, and users with tenantPersonal skills each, one of which overrides
// a shared skill by name.
const (
	tenantShared   = 300
	tenantPersonal = 5
)

// tenantLibrary seeds the shared library and users' libraries in memory.
func tenantLibrary(users int) *skillstest.Builder {
	lb := skillstest.New()
	for i := range tenantShared {
		name := fmt.Sprintf("skill-%04d", i)
		lb.Shared().File(fmt.Sprintf("cat-%02d/%s/SKILL.md", i%20, name), string(benchBody(name)))
		lb.Shared().File(fmt.Sprintf("cat-%02d/%s/references/guide.md", i%20, name), "# Reference\n")
	}
	for u := range users {
		user := tenantUser(u)
		for j := range tenantPersonal {
			name := fmt.Sprintf("mine-%d", j)
			if j == 0 {
				name = "skill-0007" // overrides the shared one
			}
			lb.User(user).File(fmt.Sprintf("personal/%s-%d/SKILL.md", user, j), string(benchBody(name)))
		}
	}
	return lb
}

func tenantUser(u int) string { return fmt.Sprintf("user%05d", u) }

func tenantCaller(u int) mounts.Caller {
	return mounts.Default().MustIdentify(mounts.Identity{User: tenantUser(u), Thread: "t"})
}

// BenchmarkManyTenants measures one catalog call as one user (the same
// caller every time) and as random users among 2,000 and 10,000, each
// served once before: with the default held budget (160 MiB), on an
// in-memory bucket that counts requests, with an in-process cache large
// enough for every user (as Redis is). Indexes are fresh for an hour, so
// polling (a LIST per library in use and refresh interval, which
// TestRevalidatedOncePerInterval bounds) stays out of the figures. It
// reports storage requests per call, what the replica holds decoded per
// user (skillsvc_skills_held_bytes, the shared library included), and the
// heap the warm-up left per user (the cache's entries included).
func BenchmarkManyTenants(b *testing.B) {
	calls := []struct {
		name string
		call func(b *testing.B, lib *skills.Library, id mounts.Caller)
	}{
		{"GetSkill", func(b *testing.B, lib *skills.Library, id mounts.Caller) {
			if _, err := lib.Catalog.Get(b.Context(), id, "skill-0042"); err != nil {
				b.Fatal(err)
			}
		}},
		{"ListSkills", func(b *testing.B, lib *skills.Library, id mounts.Caller) {
			if _, err := lib.Catalog.Page(b.Context(), id, skillview.ListOptions{}, 50, ""); err != nil {
				b.Fatal(err)
			}
		}},
		{"FormatSkills", func(b *testing.B, lib *skills.Library, id mounts.Caller) {
			if _, err := lib.Catalog.Prompt(b.Context(), id, skillview.ListOptions{}, skillmd.FormatOptions{}); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, users := range []int{2000, 10000} {
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
			bucket := objstoretest.NewFaulty(tenantLibrary(users).Bucket(b))
			reg := prometheus.NewRegistry()
			lib := skillstest.Library(b, bucket, func(cfg *skills.Config) {
				*cfg = skills.DefaultConfig()
				skillstest.Indexed(time.Hour)(cfg)
			}, skills.WithCache(cache.NewLRU(1<<30)), skills.WithRegisterer(reg))
			b.Cleanup(lib.Close)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for u := range users {
				for _, c := range calls {
					c.call(b, lib, tenantCaller(u))
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(users)
			held := 0.0
			if families, err := reg.Gather(); err == nil {
				for _, f := range families {
					if f.GetName() == "skillsvc_skills_held_bytes" {
						for _, m := range f.GetMetric() {
							held += m.GetGauge().GetValue()
						}
					}
				}
			}
			for _, who := range []string{"one", "random"} {
				for _, c := range calls {
					b.Run(who+"/"+c.name, func(b *testing.B) {
						r := rand.New(rand.NewPCG(1, 2))
						start := bucket.Calls("")
						for b.Loop() {
							u := 0
							if who == "random" {
								u = r.IntN(users)
							}
							c.call(b, lib, tenantCaller(u))
						}
						b.ReportMetric(float64(bucket.Calls("")-start)/float64(b.N), "storage/op")
						b.ReportMetric(heap, "heapB/user")
						b.ReportMetric(held/float64(users), "heldB/user")
					})
				}
			}
		})
	}
}
