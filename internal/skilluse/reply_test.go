package skilluse

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// TestFromReply: the skills read back from an encoded search or listing
// reply are those it holds, in order, the first max of them, with every
// other field of the messages skipped.
func TestFromReply(t *testing.T) {
	var want []Skill
	search := &skillsvcv1.SearchSkillsResponse{Truncated: true, LibraryDigest: "sha256:lib"}
	list := &skillsvcv1.ListSkillsResponse{NextPageToken: "next", LibraryDigest: "sha256:lib"}
	for i := range 12 {
		sk := Skill{Name: fmt.Sprint("skill-", i), Layer: []string{"user", "team:eng", "shared"}[i%3], Version: fmt.Sprint("sha256:", i)}
		want = append(want, sk)
		summary := &skillsvcv1.SkillSummary{Path: "/skills/x", Name: sk.Name, Description: "d", Layer: sk.Layer, ManifestDigest: sk.Version,
			Metadata: map[string]string{"k": "v"}, Warnings: []string{"w"}, Manifest: &skillsvcv1.SkillManifest{FileCount: 2}}
		search.Results = append(search.Results, &skillsvcv1.ScoredSkill{Skill: summary, Score: 1.5, Relevance: 0.5,
			Alternates: []*skillsvcv1.SkillAlternate{{Path: "/skills/y", Name: "y", Layer: "shared"}}})
		list.Skills = append(list.Skills, summary)
	}
	for name, c := range map[string]struct {
		m      proto.Message
		scored bool
	}{"search": {search, true}, "list": {list, false}} {
		b, err := proto.Marshal(c.m)
		if err != nil {
			t.Fatal(err)
		}
		for _, max := range []int{0, 10, 50} {
			got, total := FromReply(b, c.scored, max)
			if total != len(want) || !slices.Equal(got, want[:min(max, len(want))]) {
				t.Fatalf("%s, max %d: %v (%d), want %v", name, max, got, total, want[:min(max, len(want))])
			}
		}
	}
	if got, total := FromReply([]byte{0x0a, 0xff}, true, 10); len(got) != 0 || total != 0 {
		t.Fatalf("a malformed reply: %v, %d", got, total)
	}
}
