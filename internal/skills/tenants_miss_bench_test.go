package skills_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// BenchmarkManyTenantsMisses is BenchmarkManyTenants' random users with a
// held budget far below what 2,000 users' views take (4 MiB), as at 10,000
// users on the default budget in production: most calls rebuild the
// caller's index, view and parsed SKILL.md from the shared cache. It
// measures the allocation of those miss paths (issue 22: the GC's share
// of a replica's CPU follows it).
func BenchmarkManyTenantsMisses(b *testing.B) {
	const users = 2000
	calls := []struct {
		name string
		call func(b *testing.B, lib *skills.Library, id mounts.Caller)
	}{
		{"GetSkill", func(b *testing.B, lib *skills.Library, id mounts.Caller) {
			if _, err := lib.Catalog.Get(b.Context(), id, "skill-0042"); err != nil {
				b.Fatal(err)
			}
		}},
		{"FormatSkills", func(b *testing.B, lib *skills.Library, id mounts.Caller) {
			if _, err := lib.Catalog.Prompt(b.Context(), id, skillview.ListOptions{}, skillmd.FormatOptions{}); err != nil {
				b.Fatal(err)
			}
		}},
	}
	bucket := objstoretest.NewFaulty(tenantLibrary(users).Bucket(b))
	lib := skillstest.Library(b, bucket, func(cfg *skills.Config) {
		*cfg = skills.DefaultConfig()
		cfg.MaxHeldBytes = 4 << 20
		skillstest.Indexed(time.Hour)(cfg)
	}, skills.WithCache(cache.NewLRU(1<<30)))
	b.Cleanup(lib.Close)
	for u := range users {
		for _, c := range calls {
			c.call(b, lib, tenantCaller(u))
		}
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			start := bucket.Calls("")
			for b.Loop() {
				c.call(b, lib, tenantCaller(r.IntN(users)))
			}
			b.ReportMetric(float64(bucket.Calls("")-start)/float64(b.N), "storage/op")
		})
	}
}
