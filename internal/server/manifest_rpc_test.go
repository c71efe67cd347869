package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// pdfManifest is the manifest of alice's pdf skill in library(): each file
// with the sha256 of the bytes uploaded, in path order.
func pdfManifest(t *testing.T) *skillsvcv1.SkillManifest {
	t.Helper()
	files := library().Files()
	const prefix = "alice/skills/docs/pdf/"
	var keys []string
	for k := range files {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	m := &skillsvcv1.SkillManifest{}
	for _, k := range keys {
		sum := sha256.Sum256([]byte(files[k]))
		m.Files = append(m.Files, &skillsvcv1.ManifestFile{
			Path: "/skills/docs/pdf/" + strings.TrimPrefix(k, prefix), Size: int64(len(files[k])), Sha256: hex.EncodeToString(sum[:]),
			Mode: uint32(filemode.Of(0, []byte(files[k]))), // stored without a mode
		})
		m.TotalBytes += int64(len(files[k]))
	}
	m.FileCount = int32(len(keys))
	return m
}

// wantFull checks that s carries the manifest want (nil: any) and its
// frontmatter as JSON naming it.
func wantFull(t *testing.T, s *skillsvcv1.SkillSummary, want *skillsvcv1.SkillManifest) {
	t.Helper()
	if s.GetManifest() == nil || (want != nil && !proto.Equal(s.GetManifest(), want)) {
		t.Errorf("%s: manifest = %v\nwant %v", s.GetPath(), s.GetManifest(), want)
	}
	var fm map[string]any
	if err := json.Unmarshal([]byte(s.GetFrontmatterJson()), &fm); err != nil || fm["name"] != s.GetName() {
		t.Errorf("%s: frontmatter_json %q (%v), want the frontmatter naming %s", s.GetPath(), s.GetFrontmatterJson(), err, s.GetName())
	}
}

func wantBasic(t *testing.T, s *skillsvcv1.SkillSummary) {
	t.Helper()
	if s.GetManifest() != nil || s.GetFrontmatterJson() != "" {
		t.Errorf("%s: a basic summary carries manifest %v, frontmatter_json %q", s.GetPath(), s.GetManifest(), s.GetFrontmatterJson())
	}
}

// TestSkillViews: ListSkills returns manifests and the frontmatter as JSON
// only in the full view, GetSkill always; every listing reply names the
// same library digest, page after page and view after view.
func TestSkillViews(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	var digests []string
	for _, view := range []skillsvcv1.SkillView{skillsvcv1.SkillView_SKILL_VIEW_UNSPECIFIED, skillsvcv1.SkillView_SKILL_VIEW_BASIC, skillsvcv1.SkillView_SKILL_VIEW_FULL} {
		t.Run(view.String(), func(t *testing.T) {
			req := &skillsvcv1.ListSkillsRequest{View: view, PageSize: 2}
			var all []*skillsvcv1.SkillSummary
			for {
				res, err := c.skills.ListSkills(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				digests = append(digests, res.GetLibraryDigest())
				all = append(all, res.GetSkills()...)
				if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
					break
				}
			}
			if got := paths(all); !slices.Equal(got, listed) {
				t.Fatalf("listed %v, want %v", got, listed)
			}
			for _, s := range all {
				switch {
				case view != skillsvcv1.SkillView_SKILL_VIEW_FULL:
					wantBasic(t, s)
				case s.GetPath() == "/skills/docs/pdf":
					wantFull(t, s, pdfManifest(t))
				default:
					wantFull(t, s, nil)
				}
			}
		})
	}

	got, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	wantFull(t, got.GetSkill(), pdfManifest(t))

	format, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	search, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range search.GetResults() {
		wantBasic(t, r.GetSkill())
	}
	digests = append(digests, format.GetLibraryDigest(), search.GetLibraryDigest())
	if distinct := slices.Compact(digests); len(distinct) != 1 || !strings.HasPrefix(distinct[0], "sha256:") {
		t.Errorf("library digests %q, want one sha256:<hex> in every reply", distinct)
	}
}

// TestFormatSkillsDigestPerCaller: two users whose libraries differ only
// in skills the block leaves out get the same block (kept once) and each
// the digest of their own library, as their listings name it. (A block
// lists a user's own skills first: the category leaves them out here.)
func TestFormatSkillsDigestPerCaller(t *testing.T) {
	lb := skillstest.New()
	lb.Shared().Skill("docs/a-first", "", "The one skill the block shows.", "body\n").Skill("docs/b-second", "", "Cut by max_skills.", "body\n")
	lb.User("alice").Skill("z-alice", "", "Alice's own.", "body\n")
	lb.User("bob").Skill("z-bob", "", "Bob's own.", "body\n")
	c := start(t, lb.Bucket(t), options{})
	var texts []string
	digests := map[string]bool{}
	for _, user := range []string{"alice", "bob"} {
		ctx := grpctest.AsCaller(t.Context(), user, "t1", "")
		format, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{MaxSkills: 1, Category: proto.String("docs")})
		if err != nil {
			t.Fatal(err)
		}
		list, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if format.GetLibraryDigest() != list.GetLibraryDigest() || format.GetIncluded() != 1 || format.GetOmitted() != 1 {
			t.Errorf("%s: FormatSkills digest %q, %d included, %d omitted; want the listing's %q, 1 and 1",
				user, format.GetLibraryDigest(), format.GetIncluded(), format.GetOmitted(), list.GetLibraryDigest())
		}
		texts = append(texts, format.GetText())
		digests[format.GetLibraryDigest()] = true
	}
	if texts[0] != texts[1] || !strings.Contains(texts[0], "a-first") || len(digests) != 2 {
		t.Errorf("blocks %q, digests %v: want one block and two digests", texts, digests)
	}
}

// TestSummaryDetail: a basic listing leaves out the author's maps
// (metadata, unknown frontmatter fields) and keeps the other frontmatter
// fields; the full view and every reply about one skill or a few carry
// them.
func TestSummaryDetail(t *testing.T) {
	lb := skillstest.New()
	lb.User("alice").File("docs/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms.\nlicense: Apache-2.0\n"+
		"compatibility: Needs poppler.\nallowed-tools: Bash Read\nmetadata:\n  owner: docs-team\nx-team: docs\n---\n# PDF\n")
	c := start(t, lb.Bucket(t), options{})
	ctx := asAlice(t)
	check := func(call string, s *skillsvcv1.SkillSummary, maps bool) {
		t.Helper()
		if s.GetLicense() != "Apache-2.0" || s.GetCompatibility() != "Needs poppler." || strings.Join(s.GetAllowedTools(), " ") != "Bash Read" {
			t.Errorf("%s: license %q, compatibility %q, allowed_tools %q", call, s.GetLicense(), s.GetCompatibility(), s.GetAllowedTools())
		}
		owner, team := s.GetMetadata()["owner"], s.GetExtraFields().GetFields()["x-team"].GetStringValue()
		switch {
		case maps && (owner != "docs-team" || team != "docs"):
			t.Errorf("%s: metadata %v, extra_fields %v; want owner docs-team, x-team docs", call, s.GetMetadata(), s.GetExtraFields())
		case !maps && (s.GetMetadata() != nil || s.GetExtraFields() != nil):
			t.Errorf("%s: metadata %v, extra_fields %v; want neither", call, s.GetMetadata(), s.GetExtraFields())
		}
	}
	for _, view := range []skillsvcv1.SkillView{skillsvcv1.SkillView_SKILL_VIEW_UNSPECIFIED, skillsvcv1.SkillView_SKILL_VIEW_BASIC, skillsvcv1.SkillView_SKILL_VIEW_FULL} {
		for range 2 { // built, then kept
			list, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{View: view})
			if err != nil || len(list.GetSkills()) != 1 {
				t.Fatalf("ListSkills(%v) = %v, %v", view, list, err)
			}
			check("ListSkills "+view.String(), list.GetSkills()[0], view == skillsvcv1.SkillView_SKILL_VIEW_FULL)
		}
	}
	got, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	check("GetSkill", got.GetSkill(), true)
	render, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	check("RenderSkill", render.GetSkill(), true)
	search, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "pdf forms"})
	if err != nil || len(search.GetResults()) != 1 {
		t.Fatalf("SearchSkills = %v, %v", search, err)
	}
	check("SearchSkills", search.GetResults()[0].GetSkill(), true)
	enabled, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	check("SetSkillEnabled", enabled.GetSkill(), true)
}
