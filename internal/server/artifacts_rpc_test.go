package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// TestListSkillsArtifacts: each skill's artifact is its SKILL.md when that
// is its only file, else its root-layout archive, whose digest is the
// sha256 of what ExportSkill with ARCHIVE_LAYOUT_ROOT sends; a page ends
// early rather than pack more than the budget of skills not packed before,
// and once packed the digests come from the cache, the same ones.
func TestListSkillsArtifacts(t *testing.T) {
	lb := skillstest.New()
	alice := lb.User("alice").Skill("docs/solo", "", "Only SKILL.md.", "body\n")
	for _, n := range []string{"one", "two", "three"} {
		alice.Skill("docs/"+n, "", "Skill "+n+".", "body\n").File("docs/"+n+"/ref.md", strings.Repeat(n, 400))
	}
	c := start(t, lb.Bucket(t), options{})
	ctx := asAlice(t)
	server.SetArtifactBudget(t.Cleanup, 1500) // each skill is about 1 KiB

	list := func(token string) *skillsvcv1.ListSkillsResponse {
		t.Helper()
		resp, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 10, PageToken: token, IncludeArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	describe := func(s *skillsvcv1.SkillSummary) string {
		return fmt.Sprintf("%s %s %s", s.GetName(), s.GetArtifact().GetType(), s.GetArtifact().GetDigest())
	}
	var cold []string
	pages := 0
	for token := ""; ; pages++ {
		resp := list(token)
		for _, s := range resp.GetSkills() {
			cold = append(cold, describe(s))
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	if pages < 2 {
		t.Errorf("packing three archives of about 1 KiB within 1500 bytes took %d pages, want the page cut", pages+1)
	}
	// A change to the one skill that is its SKILL.md makes a new listing
	// (the replies kept for the old one no longer apply), which packs
	// nothing: every archive's digest is cached by its manifest.
	if _, err := c.admin.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{Library: &skillsvcv1.LibraryRef{User: "alice"},
		Path: "docs/solo/SKILL.md", Data: []byte(skillstest.SkillMD("solo", "Only SKILL.md, changed.", "body\n"))}); err != nil {
		t.Fatal(err)
	}
	warm := list("")
	if warm.GetNextPageToken() != "" || len(warm.GetSkills()) != len(cold) {
		t.Fatalf("with every digest cached: %d skills, next %q; want all %d on one page", len(warm.GetSkills()), warm.GetNextPageToken(), len(cold))
	}
	for i, s := range warm.GetSkills() {
		if s.GetName() != "solo" && describe(s) != cold[i] {
			t.Errorf("cached %s, packed %s", describe(s), cold[i])
		}
		if s.GetName() == "solo" && describe(s) == cold[i] {
			t.Errorf("solo changed, its artifact did not: %s", cold[i])
		}
		a := s.GetArtifact()
		switch s.GetName() {
		case "solo":
			got, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "solo"})
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(got.GetRaw()))
			if a.GetType() != "skill-md" || a.GetDigest() != "sha256:"+hex.EncodeToString(sum[:]) {
				t.Errorf("solo: %v, want skill-md of SKILL.md's sha256", a)
			}
		default:
			msgs, err := export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: s.GetName(), Layout: skillsvcv1.ArchiveLayout_ARCHIVE_LAYOUT_ROOT})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for _, m := range msgs {
				b.Write(m.GetData())
			}
			sum := sha256.Sum256(b.Bytes())
			if a.GetType() != "archive" || a.GetDigest() != "sha256:"+hex.EncodeToString(sum[:]) {
				t.Errorf("%s: %v, want the archive's sha256 %x", s.GetName(), a, sum)
			}
			zr, err := gzip.NewReader(&b)
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(zr)
			var names []string
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, h.Name)
			}
			if strings.Join(names, ",") != "SKILL.md,ref.md" {
				t.Errorf("%s: entries %v, want the files at the root", s.GetName(), names)
			}
		}
	}
	// Without include_artifacts no skill carries one.
	plain, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plain.GetSkills() {
		if s.GetArtifact() != nil {
			t.Errorf("%s: an artifact without include_artifacts", s.GetName())
		}
	}
	_, err = export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: "one", Layout: 7})
	wantCode(t, "ExportSkill with layout 7", err, codes.InvalidArgument)
}
