package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// Every AdminService call here carries no identity metadata (t.Context()):
// operators are not workers.

func TestDropSkillIndexInvalid(t *testing.T) {
	c, bucket := startSkills(t, options{})
	before := keys(t, bucket)
	for _, tc := range []struct {
		name string
		req  *skillsvcv1.DropSkillIndexRequest
	}{
		{"neither", &skillsvcv1.DropSkillIndexRequest{}},
		{"both", &skillsvcv1.DropSkillIndexRequest{User: "alice", Shared: true}},
		{"path as user", &skillsvcv1.DropSkillIndexRequest{User: "../alice"}},
		{"slash in user", &skillsvcv1.DropSkillIndexRequest{User: "a/b"}},
		{"shared prefix as user", &skillsvcv1.DropSkillIndexRequest{User: "_shared"}},
		{"space in user", &skillsvcv1.DropSkillIndexRequest{User: "al ice"}},
		{"user too long", &skillsvcv1.DropSkillIndexRequest{User: strings.Repeat("a", 129)}},
		{"user not UTF-8", &skillsvcv1.DropSkillIndexRequest{User: "al\xffice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.admin.DropSkillIndex(t.Context(), tc.req)
			wantError(t, err, codes.InvalidArgument, "user")
		})
	}
	if after := keys(t, bucket); !slices.Equal(after, before) {
		t.Errorf("invalid calls changed the bucket: %v, was %v", after, before)
	}
}

// TestDropSkillIndex puts a skill straight into the bucket, as an `aws s3
// sync` would, under an index that would hide it for an hour: only the
// library's DropSkillIndex shows it at once; dropping another library does
// not.
func TestDropSkillIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   string                            // the new SKILL.md
		other *skillsvcv1.DropSkillIndexRequest // a library the change is not in
		drop  *skillsvcv1.DropSkillIndexRequest
	}{
		{
			"user", "alice/skills/fresh/SKILL.md",
			&skillsvcv1.DropSkillIndexRequest{Shared: true},
			&skillsvcv1.DropSkillIndexRequest{User: "alice"},
		},
		{
			"shared", skillstest.SharedPrefix + "fresh/SKILL.md",
			&skillsvcv1.DropSkillIndexRequest{User: "bob"},
			&skillsvcv1.DropSkillIndexRequest{Shared: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, bucket := startSkills(t, options{skills: skillstest.Indexed(time.Hour)})
			list := func(step string) []string {
				t.Helper()
				res, err := c.skills.ListSkills(asAlice(t), &skillsvcv1.ListSkillsRequest{})
				if err != nil {
					t.Fatalf("%s: ListSkills: %v", step, err)
				}
				return paths(res.GetSkills())
			}
			drop := func(req *skillsvcv1.DropSkillIndexRequest) {
				t.Helper()
				if _, err := c.admin.DropSkillIndex(t.Context(), req); err != nil {
					t.Fatalf("DropSkillIndex(%v): %v", req, err)
				}
			}

			if got := list("before"); !slices.Equal(got, listed) {
				t.Fatalf("before: listed %v, want %v", got, listed)
			}
			md := skillstest.SkillMD("fresh", "Uploaded behind the catalog's back.", "# Fresh\n")
			if _, err := bucket.Put(t.Context(), tc.key, strings.NewReader(md), int64(len(md)), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := list("after the upload"); !slices.Equal(got, listed) {
				t.Fatalf("after the upload, before any drop: listed %v, want the cached %v", got, listed)
			}
			drop(tc.other)
			if got := list("after dropping another library"); slices.Contains(got, "/skills/fresh") {
				t.Errorf("dropping %v showed a change to another library: %v", tc.other, got)
			}
			drop(tc.drop)
			want := slices.Sorted(slices.Values(append(slices.Clone(listed), "/skills/fresh")))
			if got := list("after the drop"); !slices.Equal(got, want) {
				t.Errorf("after the drop: listed %v, want %v", got, want)
			}
		})
	}
}

// TestDropSkillIndexIgnoresIdentity: a worker's identity metadata neither
// helps nor hinders an admin call.
func TestDropSkillIndexIgnoresIdentity(t *testing.T) {
	c, _ := startSkills(t, options{})
	for _, tc := range incompleteIdentities {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.admin.DropSkillIndex(as(t, tc.md...), &skillsvcv1.DropSkillIndexRequest{Shared: true}); err != nil {
				t.Errorf("DropSkillIndex: %v", err)
			}
		})
	}
	if _, err := c.admin.DropSkillIndex(asAlice(t), &skillsvcv1.DropSkillIndexRequest{User: "bob"}); err != nil {
		t.Errorf("DropSkillIndex with alice's identity for bob: %v", err)
	}
}
