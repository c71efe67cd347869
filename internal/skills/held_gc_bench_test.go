package skills_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// BenchmarkHeldMark is what the held state of many users costs the garbage
// collector: 10,000 users of BenchmarkManyTenants' library, each served a
// GetSkill, a ListSkills page and a FormatSkills block (their indexes,
// views and settings held, on the default budget), then one op is one full
// collection. A random user's call pays for marking this heap in every
// cycle its allocations start (issue 22: 16% of skillsvc's CPU in the
// random-user GetSkill events row), so ms/GC, the live objects and the
// scannable bytes a user adds are the measure of a leaner held form; ms/GC
// is what the held state adds to a collection (the time of one before the
// users were served is taken off). No shared cache: the replica's own heap
// only.
func BenchmarkHeldMark(b *testing.B) {
	const users = 10000
	bucket := objstoretest.NewFaulty(tenantLibrary(users).Bucket(b))
	lib := skillstest.Library(b, bucket, func(cfg *skills.Config) {
		*cfg = skills.DefaultConfig()
		skillstest.Indexed(time.Hour)(cfg)
	})
	b.Cleanup(lib.Close)
	sample := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}}
	read := func() (objects, scan float64) {
		runtime.GC()
		metrics.Read(sample)
		return float64(sample[0].Value.Uint64()), float64(sample[1].Value.Uint64())
	}
	objects0, scan0 := read()
	// The collections' time before the users are served: the bucket's
	// files, and whatever an earlier run of the benchmark left live.
	const baseRuns = 5
	start := time.Now()
	for range baseRuns {
		runtime.GC()
	}
	base := float64(time.Since(start).Microseconds()) / 1000 / baseRuns
	for u := range users {
		id := tenantCaller(u)
		if _, err := lib.Catalog.Get(b.Context(), id, "skill-0042"); err != nil {
			b.Fatal(err)
		}
		if _, err := lib.Catalog.Page(b.Context(), id, skillview.ListOptions{}, 50, ""); err != nil {
			b.Fatal(err)
		}
		if _, err := lib.Catalog.Prompt(b.Context(), id, skillview.ListOptions{}, skillmd.FormatOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	objects, scan := read()
	start = time.Now()
	for b.Loop() {
		runtime.GC()
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N)-base, "ms/GC")
	b.ReportMetric((objects-objects0)/users, "objects/user")
	b.ReportMetric((scan-scan0)/users, "scanB/user")
	runtime.KeepAlive(lib)
}
