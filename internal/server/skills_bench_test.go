package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// BenchmarkListSkillsHandler1000 is the ListSkills handler on a warm index
// of 1,000 skills, one page of all of them: listing, the page's byte
// budget (each summary measured once) and the conversion to protos,
// without the wire.
func BenchmarkListSkillsHandler1000(b *testing.B) {
	lib := skillstest.New()
	for i := range 1000 {
		lib.User("alice").Skill(fmt.Sprintf("c%02d/s%04d", i%20, i), "", fmt.Sprintf("Skill number %d does one thing well.", i), "# Body\n")
	}
	l := skillstest.Library(b, lib.Bucket(b), skillstest.Indexed(time.Hour))
	h := server.NewSkills(l, 256<<10)
	ctx := auth.NewContext(context.Background(), auth.Principal{Caller: mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})})
	req := &skillsvcv1.ListSkillsRequest{PageSize: 1000}
	if res, err := h.ListSkills(ctx, req); err != nil || len(res.GetSkills()) != 1000 {
		b.Fatalf("ListSkills = %d skills, %v", len(res.GetSkills()), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.ListSkills(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
