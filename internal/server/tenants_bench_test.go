package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// The many-tenants library of issue 22 as bench-load seeds it: a shared
// library of tenantShared skills, and users with tenantPersonal skills of
// their own each, the first overriding a shared skill by name.
const (
	tenantShared   = 300
	tenantPersonal = 5
	tenantUsers    = 10_000
)

// tenantSKILLMD is a SKILL.md of about 3 KiB with bench-load's frontmatter.
func tenantSKILLMD(name string, i int) string {
	var md strings.Builder
	fmt.Fprintf(&md, "---\nname: %s\ndescription: Handles task family %d end to end. Use when the user asks for it, needs a checklist, or wants a draft reviewed.\n", name, i)
	fmt.Fprintf(&md, "license: Apache-2.0\nmetadata:\n  author: bench\n  version: \"1.%d\"\n  category: cat-%02d\n---\n# Steps\n\n", i%10, i%20)
	for step := 1; md.Len() < 3000; step++ {
		fmt.Fprintf(&md, "%d. Read the input for step %d, note anything unusual, keep the user's wording.\n", step, step)
	}
	return md.String()
}

func tenantOwn(u, j int) string {
	if j == 0 {
		return fmt.Sprintf("skill-%04d", 7) // overrides the shared one
	}
	return fmt.Sprintf("mine-%05d-%d", u, j)
}

// tenantPick is the skill a call as user u asks for: one of the 299 shared
// skills the user sees or one of the user's own, uniformly, as bench-load's
// random GetSkill picks.
func tenantPick(u, i int) string {
	if i < tenantShared-1 {
		if i >= 7 {
			i++ // skill-0007 is the user's own
		}
		return fmt.Sprintf("skill-%04d", i)
	}
	return tenantOwn(u, i-(tenantShared-1))
}

// BenchmarkGetSkillTenants is the GetSkill handler as bench-load's events
// pass calls it, in one process: 10,000 users over a shared library, every
// skill read once before, then calls as one user or as random users, each
// for a random skill the user sees, with the default held budget and reply
// cache, an in-process cache as large as Redis would be and indexes fresh
// for an hour (events keep them fresh), the in-process cache in front of a
// larger one standing in for Redis. Its "random" against "one" is the
// CPU side of issue 22's 80% target: what a call pays for finding a random
// user's view, settings and reply, and for rebuilding the replies of users'
// own skills, which do not all fit the reply cache.
func BenchmarkGetSkillTenants(b *testing.B) {
	lib := skillstest.New()
	for i := range tenantShared {
		name := fmt.Sprintf("skill-%04d", i)
		dir := fmt.Sprintf("cat-%02d/%s", i%20, name)
		lib.Shared().File(dir+"/SKILL.md", tenantSKILLMD(name, i)).File(dir+"/references/guide.md", strings.Repeat("- a convention\n", 100))
	}
	for u := range tenantUsers {
		for j := range tenantPersonal {
			name := tenantOwn(u, j)
			lib.User(fmt.Sprintf("user%05d", u)).File("own/"+name+"/SKILL.md", tenantSKILLMD(name, u*tenantPersonal+j))
		}
	}
	l := skillstest.Library(b, lib.Bucket(b), func(c *skills.Config) {
		*c = skills.DefaultConfig()
		skillstest.Indexed(time.Hour)(c)
	}, skills.WithCache(cache.NewTiered(cache.NewLRU(32<<20), cache.NewLRU(1<<30), 5*time.Second)))
	b.Cleanup(l.Close)
	h := server.NewSkills(l, 256<<10)
	// The same handler counting usage as the binary does by default: an
	// aggregator flushing every --usage.flush-interval (to an in-process
	// store here; Redis's round trip is the flush's, off the call).
	ucfg := usage.DefaultConfig()
	// Lifted so every call records (what is measured): random users'
	// calls make up to 10,000 × 304 distinct entries, past the default
	// --usage.max-entries (50,000) within one flush interval when the
	// benchmark runs fast, and a dropped use costs less than a recorded one.
	ucfg.MaxEntries = 4 << 20
	agg := usage.NewRecorder(ucfg, usage.NewMemoryStore(ucfg))
	agg.Start()
	b.Cleanup(agg.Close)
	counted := server.NewSkills(l, 256<<10, server.WithUsage(agg))
	ctxs := make([]context.Context, tenantUsers)
	for u := range ctxs {
		ctxs[u] = auth.NewContext(context.Background(), auth.Principal{Caller: mounts.Default().MustIdentify(mounts.Identity{User: fmt.Sprintf("user%05d", u), Thread: "t"})})
	}
	var callOn func(h *server.Skills, u, i int) ([]byte, error)
	call := func(u, i int) ([]byte, error) { return callOn(h, u, i) }
	callOn = func(h *server.Skills, u, i int) ([]byte, error) {
		res, err := h.GetSkill(ctxs[u], &skillsvcv1.GetSkillRequest{Path: tenantPick(u, i)})
		if err != nil {
			return nil, err
		}
		return proto.Marshal(res)
	}
	get := func(b *testing.B, u, i int) []byte {
		data, err := call(u, i)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	warm := func(b *testing.B, u, i int) {
		var got skillsvcv1.GetSkillResponse
		if err := proto.Unmarshal(get(b, u, i), &got); err != nil || got.GetSkill().GetName() != tenantPick(u, i) || got.GetBody() == "" {
			b.Fatalf("GetSkill(%s) as user %d = %v, %v", tenantPick(u, i), u, got.GetSkill(), err)
		}
	}
	seen := tenantShared - 1 + tenantPersonal
	for i := range seen {
		warm(b, 0, i)
	}
	for u := 1; u < tenantUsers; u++ {
		for j := range tenantPersonal {
			warm(b, u, tenantShared-1+j)
		}
	}
	for _, who := range []string{"one", "random"} {
		b.Run(who, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				u := 0
				if who == "random" {
					u = r.IntN(tenantUsers)
				}
				get(b, u, r.IntN(seen))
			}
		})
		// The same calls counted (one/usage against one): what recording
		// a use costs a call, issue 44's "at most 2%".
		b.Run(who+"/usage", func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			before := agg.Stats().Recorded
			b.ReportAllocs()
			for b.Loop() {
				u := 0
				if who == "random" {
					u = r.IntN(tenantUsers)
				}
				if _, err := callOn(counted, u, r.IntN(seen)); err != nil {
					b.Fatal(err)
				}
			}
			if got := agg.Stats().Recorded - before; got != int64(b.N) {
				b.Fatalf("%d activations recorded for %d calls", got, b.N)
			}
		})
		// As a replica serves them: 16 callers at once on the machine's
		// cores (bench-load's clients), contending for what every call
		// locks and writes.
		b.Run(who+"/parallel", func(b *testing.B) {
			var seed atomic.Uint64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(seed.Add(1), 2))
				for pb.Next() {
					u := 0
					if who == "random" {
						u = r.IntN(tenantUsers)
					}
					if _, err := call(u, r.IntN(seen)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
