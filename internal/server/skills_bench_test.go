package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// replyModes are the two ways a handler answers a warm call: building and
// encoding the reply (--skills.reply-cache-bytes=0, as before replies were
// kept) or sending the reply it kept.
var replyModes = []struct {
	name  string
	bytes int64
}{{"built", 0}, {"reused", skills.DefaultConfig().ReplyCacheBytes}}

// benchHandler returns the skills handler over lib's files, warm (indexes
// held for an hour), and alice's context.
func benchHandler(b *testing.B, lib *skillstest.Builder, replyBytes int64) (*server.Skills, context.Context) {
	l := skillstest.Library(b, lib.Bucket(b), func(c *skills.Config) {
		skillstest.Indexed(time.Hour)(c)
		c.ReplyCacheBytes = replyBytes
	})
	ctx := auth.NewContext(context.Background(), auth.Principal{Caller: mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})})
	return server.NewSkills(l, 256<<10), ctx
}

// wire is what gRPC does with a handler's reply: marshal it.
func wire(b *testing.B, m proto.Message) []byte {
	data, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkListSkillsHandler1000 is the ListSkills handler on a warm index
// of 1,000 skills (bench-load's), one page of all of them in the basic
// view, and the marshalling of its reply (without the rest of the wire):
// listing, the page's byte budget (each summary measured once) and the
// conversion to protos when built; the lookup of the view, the settings and
// the kept reply when reused.
func BenchmarkListSkillsHandler1000(b *testing.B) {
	lib := listLibrary1000()
	for _, mode := range replyModes {
		b.Run(mode.name, func(b *testing.B) {
			h, ctx := benchHandler(b, lib, mode.bytes)
			req := &skillsvcv1.ListSkillsRequest{PageSize: 1000}
			res, err := h.ListSkills(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			var got skillsvcv1.ListSkillsResponse
			if err := proto.Unmarshal(wire(b, res), &got); err != nil || len(got.GetSkills()) != 1000 {
				b.Fatalf("ListSkills = %d skills, %v", len(got.GetSkills()), err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := h.ListSkills(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				wire(b, res)
			}
		})
	}
}

// BenchmarkFormatSkillsHandler is the FormatSkills handler on the
// many-tenants library of issue 22 (a shared library of 300 skills, the
// user's 5, one overriding a shared skill), warm, with its reply
// marshalled: the prompt block of the default budget.
func BenchmarkFormatSkillsHandler(b *testing.B) {
	lib := skillstest.New()
	desc := func(i int) string {
		return fmt.Sprintf("Handles task family %d end to end. Use when the user asks for it, needs a checklist for it, or wants a draft reviewed.", i)
	}
	for i := range 300 {
		lib.Shared().Skill(fmt.Sprintf("cat-%02d/skill-%04d", i%20, i), "", desc(i), "# Body\n")
	}
	for j := range 5 {
		name := fmt.Sprintf("mine-%d", j)
		if j == 0 {
			name = "skill-0007"
		}
		lib.User("alice").Skill("personal/"+name, name, desc(1000+j), "# Body\n")
	}
	for _, mode := range replyModes {
		b.Run(mode.name, func(b *testing.B) {
			h, ctx := benchHandler(b, lib, mode.bytes)
			req := &skillsvcv1.FormatSkillsRequest{}
			res, err := h.FormatSkills(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			var got skillsvcv1.FormatSkillsResponse
			if err := proto.Unmarshal(wire(b, res), &got); err != nil || got.GetIncluded() == 0 || !strings.Contains(got.GetText(), "skill-0000") {
				b.Fatalf("FormatSkills = %d skills, %v", got.GetIncluded(), err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := h.FormatSkills(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				wire(b, res)
			}
		})
	}
}

// BenchmarkListSkillsDecode1000 is the other end of
// BenchmarkListSkillsHandler1000: a client decoding the reply of 1,000
// skills of bench-load's frontmatter, which bench-load's warm ListSkills
// latency includes (issue 22: where the time of a warm 1,000-skill listing
// goes), in each view. Go's protobuf decodes each summary's metadata into
// a new map, about 20 allocations, most of a full page's decode; the basic
// view leaves the maps out.
func BenchmarkListSkillsDecode1000(b *testing.B) {
	h, ctx := benchHandler(b, listLibrary1000(), skills.DefaultConfig().ReplyCacheBytes)
	for _, view := range []skillsvcv1.SkillView{skillsvcv1.SkillView_SKILL_VIEW_BASIC, skillsvcv1.SkillView_SKILL_VIEW_FULL} {
		res, err := h.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 1000, View: view})
		if err != nil {
			b.Fatal(err)
		}
		data := wire(b, res) // the kept reply's bytes, as sent
		b.Run(viewName(view), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var got skillsvcv1.ListSkillsResponse
				if err := proto.Unmarshal(data, &got); err != nil || len(got.GetSkills()) != 1000 {
					b.Fatalf("decoded %d skills, %v", len(got.GetSkills()), err)
				}
			}
		})
	}
}

// listLibrary1000 is bench-load's library of one user with 1,000 skills:
// each SKILL.md's frontmatter a 170-character description, a license and
// three metadata entries, in 20 categories.
func listLibrary1000() *skillstest.Builder {
	lib := skillstest.New()
	for i := range 1000 {
		lib.User("alice").File(fmt.Sprintf("c%02d/s%04d/SKILL.md", i%20, i), fmt.Sprintf("---\nname: s%04d\n"+
			"description: Handles topic %d for team %d. Use when the user asks about it, needs a checklist "+
			"for it, or wants an existing draft reviewed against the house conventions.\n"+
			"license: Apache-2.0\nmetadata:\n  author: bench-load\n  version: \"1.%d\"\n  category: c%02d\n---\n# Body\n",
			i, i, i%37, i%10, i%20))
	}
	return lib
}

// viewName is a sub-benchmark's name for view: "basic" or "full".
func viewName(view skillsvcv1.SkillView) string {
	return strings.ToLower(strings.TrimPrefix(view.String(), "SKILL_VIEW_"))
}

// BenchmarkGetSkillHandler is the GetSkill handler on the many-tenants
// library of issue 22, warm, with its reply marshalled: a shared skill of a
// SKILL.md of about 3 KiB (frontmatter with license and metadata) and one
// reference file, as bench-load seeds them.
func BenchmarkGetSkillHandler(b *testing.B) {
	lib := getSkillLibrary()
	for _, mode := range replyModes {
		b.Run(mode.name, func(b *testing.B) {
			h, ctx := benchHandler(b, lib, mode.bytes)
			req := &skillsvcv1.GetSkillRequest{Path: "skill-0042"}
			res, err := h.GetSkill(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			var got skillsvcv1.GetSkillResponse
			if err := proto.Unmarshal(wire(b, res), &got); err != nil || got.GetSkill().GetName() != "skill-0042" || len(got.GetFiles()) != 1 || got.GetFrontmatter() == nil {
				b.Fatalf("GetSkill = %v, %v", &got, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := h.GetSkill(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				wire(b, res)
			}
		})
	}
}

// getSkillLibrary is the many-tenants library of issue 22 as bench-load
// seeds it: 300 shared skills of a SKILL.md of about 3 KiB (frontmatter
// with license and metadata) and one reference file, and alice's own skill.
func getSkillLibrary() *skillstest.Builder {
	lib := skillstest.New()
	for i := range 300 {
		dir := fmt.Sprintf("cat-%02d/skill-%04d", i%20, i)
		var md strings.Builder
		fmt.Fprintf(&md, "---\nname: skill-%04d\ndescription: Handles task family %d end to end. Use when the user asks for it.\n", i, i)
		md.WriteString("license: Apache-2.0\nmetadata:\n  author: bench\n  version: \"1.2\"\n---\n# Steps\n\n")
		for step := 1; md.Len() < 3000; step++ {
			fmt.Fprintf(&md, "%d. Read the input for step %d, note anything unusual, keep the user's wording.\n", step, step)
		}
		lib.Shared().File(dir+"/SKILL.md", md.String()).File(dir+"/references/guide.md", strings.Repeat("- a convention\n", 100))
	}
	lib.User("alice").Skill("personal/mine", "", "Mine.", "# Body\n")
	return lib
}
