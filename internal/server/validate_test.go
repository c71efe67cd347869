package server_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestInvalidUTF8 sends strings that are not UTF-8 (the generated clients
// send any bytes, as other languages' may): each is INVALID_ARGUMENT naming
// the field, never INTERNAL, and nothing is stored.
func TestInvalidUTF8(t *testing.T) {
	bucket := objstoretest.NewBucket(t, nil)
	c := start(t, bucket, options{})
	ctx := asAlice(t)
	const bad = "\xff\xfe"
	for _, tc := range []struct {
		name  string
		field string
		call  func() error
	}{
		{"Read path", "path", func() error {
			_, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/" + bad})
			return err
		}},
		{"Write content", "content", func() error {
			_, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "ok " + bad})
			return err
		}},
		{"Edit new_string", "new_string", func() error {
			_, err := c.fs.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/a.md", OldString: "x", NewString: bad})
			return err
		}},
		{"Grep pattern", "pattern", func() error {
			_, err := c.fs.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: bad})
			return err
		}},
		{"Glob pattern", "pattern", func() error {
			_, err := c.fs.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/workspace", Pattern: "*" + bad})
			return err
		}},
		{"Upload header path", "header.path", func() error {
			_, err := upload(ctx, c.fs, header("/workspace/"+bad), chunk([]byte("data")))
			return err
		}},
		{"ListSkills category", "category", func() error {
			cat := bad
			_, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{Category: &cat})
			return err
		}},
		{"RenderSkill arguments", "arguments", func() error {
			_, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: "pdf", Arguments: bad})
			return err
		}},
		{"FormatSkills query", "query", func() error {
			_, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Query: "pdf " + bad})
			return err
		}},
		{"SearchSkills query", "query", func() error {
			_, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "pdf " + bad})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "field "+tc.field+" ") {
				t.Errorf("err = %v, want INVALID_ARGUMENT naming field %s", err, tc.field)
			}
		})
	}
	if got := keys(t, bucket); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}
