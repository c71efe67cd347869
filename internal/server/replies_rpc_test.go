package server_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// TestRepliesOnTheWire: a ListSkills page, FormatSkills block or
// SearchSkills reply the catalog kept encoded reads, on the wire, exactly as
// the reply built for the call does (a server that keeps none), and a change
// to the library is in the next reply of both.
func TestRepliesOnTheWire(t *testing.T) {
	bucket := library().Bucket(t)
	kept := start(t, bucket, options{})
	built := start(t, bucket, options{skills: func(c *skills.Config) { c.ReplyCacheBytes = 0 }})
	ctx := asAlice(t)
	calls := []struct {
		name string
		call func(c client) (proto.Message, error)
	}{
		{"ListSkills", func(c client) (proto.Message, error) {
			return c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true})
		}},
		{"ListSkills full view, pages of 3", func(c client) (proto.Message, error) {
			return c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 3, View: skillsvcv1.SkillView_SKILL_VIEW_FULL})
		}},
		{"FormatSkills", func(c client) (proto.Message, error) {
			return c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{GroupByCategory: true})
		}},
		{"SearchSkills", func(c client) (proto.Message, error) {
			return c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "pdf documents"})
		}},
	}
	check := func(t *testing.T, wantIn string) {
		for _, tc := range calls {
			t.Run(tc.name, func(t *testing.T) {
				want, err := tc.call(built)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 2 { // built, then reused
					got, err := tc.call(kept)
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(got, want) {
						t.Fatalf("call %d: reply\n%v\nwant\n%v", i+1, got, want)
					}
					if len(got.ProtoReflect().GetUnknown()) != 0 {
						t.Errorf("call %d: the reply has unknown fields on the client", i+1)
					}
				}
				if !strings.Contains(want.(interface{ String() string }).String(), wantIn) {
					t.Errorf("reply %v does not hold %q", want, wantIn)
				}
			})
		}
	}
	t.Run("as built", func(t *testing.T) { check(t, "pdf") })
	md := skillstest.SkillMD("pdf", "Fill in PDF forms and documents, newly worded.", "body\n")
	if _, err := bucket.Put(t.Context(), "alice/skills/docs/pdf/SKILL.md", strings.NewReader(md), int64(len(md)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("after a change", func(t *testing.T) { check(t, "newly worded") })
}
