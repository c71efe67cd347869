package server_test

import (
	"encoding/xml"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// namedLibrary reproduces the catalog fidelity defects: a skill whose name
// differs from its folder, a user skill overriding a shared one by name
// from another folder, two folders with one name, a display name, a nested
// SKILL.md, a shebang script outside scripts/ and tags.
func namedLibrary() *skillstest.Builder {
	b := skillstest.New()
	b.User("alice").
		Skill("writing/blog-post", "blogging", "Write blog posts in the house style.", "# Blog\n\nDraft $ARGUMENTS.\n").
		File("writing/blog-post/tools/wordcount", "#!/bin/sh\nwc -w \"$@\"\n").
		File("writing/blog-post/logo.png", pngHeader).
		Skill("my-review", "code-review", "Alice's own code review checklist.", "# Alice review\n").
		Skill("fmt/one", "fmt", "Format source code, first copy.", "# One\n").
		Skill("fmt/two", "fmt", "Format source code, second copy.", "# Two\n").
		File("legal/escritura/SKILL.md", "---\nname: Escritura de Compraventa\ndescription: Redacta escrituras de compraventa.\ntags: [notaria, inmuebles]\n---\n# Escritura\n").
		Skill("archive/2024/old", "", "Archived, nested too deep.", "# Old\n")
	b.Shared().
		Skill("review/code-review", "", "SHARED code review.", "# Shared review\n").
		Skill("data/csv", "", "Read and write comma-separated values files.", "# CSV\n")
	return b
}

func TestCatalogNames(t *testing.T) {
	c := start(t, namedLibrary().Bucket(t), options{})
	ctx := asAlice(t)
	all, _ := listAll(ctx, t, c.skills, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true}, 100)
	by := map[string]*skillsvcv1.SkillSummary{}
	for _, s := range all {
		by[s.GetPath()] = s
	}
	if got, want := paths(all), []string{
		"/skills/archive/2024/old", "/skills/data/csv", "/skills/fmt/one", "/skills/fmt/two",
		"/skills/legal/escritura", "/skills/my-review", "/skills/writing/blog-post",
	}; !slices.Equal(got, want) {
		t.Errorf("listed %q, want %q", got, want)
	}
	if s := by["/skills/legal/escritura"]; s.GetName() != "escritura" || s.GetDisplayName() != "Escritura de Compraventa" || len(s.GetErrors()) != 0 || len(s.GetWarnings()) != 1 {
		t.Errorf("display-named skill = %v", s)
	}
	if s := by["/skills/archive/2024/old"]; len(s.GetErrors()) == 0 || !strings.Contains(s.GetErrors()[0], "nested deeper") {
		t.Errorf("nested skill = %v", s)
	}
	if s := by["/skills/fmt/two"]; s.GetName() != "fmt" || !strings.Contains(strings.Join(s.GetWarnings(), " "), "/skills/fmt/one, which the name refers to") {
		t.Errorf("duplicate = %v", s)
	}

	// Every RPC takes the name the listing shows.
	for _, tc := range []struct{ ref, path string }{
		{"blogging", "/skills/writing/blog-post"},
		{"code-review", "/skills/my-review"},
		{"fmt", "/skills/fmt/one"},
		{"escritura", "/skills/legal/escritura"},
		{"Escritura de Compraventa", "/skills/legal/escritura"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			g, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: tc.ref})
			if err != nil || g.GetSkill().GetPath() != tc.path {
				t.Errorf("GetSkill = %v, %v", g.GetSkill(), err)
			}
			r, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: tc.ref})
			if err != nil || !strings.HasPrefix(r.GetText(), "Base directory for this skill: "+tc.path+"\n") {
				t.Errorf("RenderSkill = %q, %v", r.GetText(), err)
			}
			f, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: tc.ref, File: "SKILL.md"})
			if err != nil || f.GetPath() != tc.path+"/SKILL.md" {
				t.Errorf("ReadSkillFile = %v, %v", f.GetPath(), err)
			}
			if _, err := export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: tc.ref}); err != nil {
				t.Errorf("ExportSkill: %v", err)
			}
			s, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: tc.ref, Enabled: false})
			if err != nil || s.GetSkill().GetPath() != tc.path || !s.GetSkill().GetDisabled() {
				t.Errorf("SetSkillEnabled = %v, %v", s.GetSkill(), err)
			}
			if _, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: tc.ref, Enabled: true}); err != nil {
				t.Error(err)
			}
		})
	}
	// The shared code-review is hidden from listings, name lookups and the
	// filesystem, but reachable by its path (issue 24: no silent
	// shadowing), as the listing's warning on alice's names it.
	g, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "/skills/review/code-review"})
	if err != nil || g.GetSkill().GetLayer() != "shared" {
		t.Errorf("GetSkill(/skills/review/code-review) = %v, %v; want the shared skill", g.GetSkill(), err)
	}
	if s := by["/skills/my-review"]; !strings.Contains(strings.Join(s.GetWarnings(), " "), `hides the shared skill "code-review" at /skills/review/code-review`) {
		t.Errorf("alice's code-review does not say what it hides: %v", s.GetWarnings())
	}
	_, err = c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/review/code-review/SKILL.md"})
	wantCode(t, "Read", err, codes.NotFound)
	block, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
	if err != nil || strings.Count(block.GetText(), "<name>code-review</name>") != 1 {
		t.Errorf("FormatSkills = %v\n%s", err, block.GetText())
	}
	_, err = c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "/skills/archive/2024/old"})
	wantError(t, err, codes.FailedPrecondition, "nested deeper")
}

func TestFormatSkillsOptions(t *testing.T) {
	c := start(t, namedLibrary().Bucket(t), options{skills: func(cfg *skills.Config) { cfg.SearchTool = "configured_search" }})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name        string
		req         *skillsvcv1.FormatSkillsRequest
		has, hasNot []string
	}{
		{"grouped xml", &skillsvcv1.FormatSkillsRequest{GroupByCategory: true},
			[]string{"<available_skills>\n<skill>\n<name>code-review</name>", `<category name="data">`, `<category name="fmt">`}, nil},
		{"grouped markdown", &skillsvcv1.FormatSkillsRequest{GroupByCategory: true, Format: skillmd.FormatMarkdown},
			[]string{"\n### legal\n\n- **escritura**"}, nil},
		{"yaml", &skillsvcv1.FormatSkillsRequest{Format: skillmd.FormatYAML},
			[]string{"---\nname: blogging\ndescription: Write blog posts in the house style.\nlocation: /skills/writing/blog-post/SKILL.md\n"}, []string{"<skill>"}},
		{"quotes are not escaped", &skillsvcv1.FormatSkillsRequest{},
			[]string{"Alice's own code review"}, []string{"&#39;", "&#34;"}},
		{"search tool of the request", &skillsvcv1.FormatSkillsRequest{MaxSkills: 1, SearchTool: "find_skills"},
			[]string{"5 more skills not shown; use find_skills to find them"}, []string{"SearchSkills"}},
		{"configured search tool", &skillsvcv1.FormatSkillsRequest{MaxSkills: 1},
			[]string{"use configured_search to find them"}, []string{"SearchSkills"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.FormatSkills(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.has {
				if !strings.Contains(res.GetText(), s) {
					t.Errorf("text lacks %q:\n%s", s, res.GetText())
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(res.GetText(), s) {
					t.Errorf("text has %q:\n%s", s, res.GetText())
				}
			}
			if tc.req.GetFormat() == "" && xml.Unmarshal([]byte(res.GetText()), new(struct{})) != nil {
				t.Errorf("not well-formed:\n%s", res.GetText())
			}
		})
	}
	for _, tc := range []struct {
		name    string
		req     *skillsvcv1.FormatSkillsRequest
		mention string
	}{
		{"budget below the empty block", &skillsvcv1.FormatSkillsRequest{CharBudget: 20}, "char_budget"},
		{"search tool that is no name", &skillsvcv1.FormatSkillsRequest{SearchTool: "x -->"}, "search_tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.skills.FormatSkills(ctx, tc.req)
			wantError(t, err, codes.InvalidArgument, tc.mention)
		})
	}
}

func TestRenderSkillBaseDir(t *testing.T) {
	c := start(t, namedLibrary().Bucket(t), options{})
	ctx := asAlice(t)
	r, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: "blogging", Arguments: "a post", BaseDir: "/sandbox/skills/blog-post"})
	if err != nil || r.GetText() != "Base directory for this skill: /sandbox/skills/blog-post\n\n# Blog\n\nDraft a post.\n" || r.GetSkill().GetPath() != "/skills/writing/blog-post" {
		t.Errorf("RenderSkill = %q %v, %v", r.GetText(), r.GetSkill(), err)
	}
	_, err = c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: "blogging", BaseDir: "/x\nsecond line"})
	wantError(t, err, codes.InvalidArgument, "base_dir")
}

func TestReadSkillFileHints(t *testing.T) {
	c := start(t, namedLibrary().Bucket(t), options{})
	ctx := asAlice(t)
	for _, tc := range []struct{ tool, want string }{
		{"", "fetch the file itself instead of reading it as text"},
		{"download_file", "fetch it with download_file instead"},
	} {
		_, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "blogging", File: "logo.png", DownloadTool: tc.tool})
		wantError(t, err, codes.FailedPrecondition, tc.want)
		if msg := status.Convert(err).Message(); strings.Contains(msg, "FilesystemService") || strings.Contains(msg, "ExportSkill") {
			t.Errorf("message %q names our RPCs", msg)
		}
	}
	_, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "blogging", File: "logo.png", DownloadTool: "a b"})
	wantError(t, err, codes.InvalidArgument, "download_tool")
}

func TestSearchSkillsOptions(t *testing.T) {
	c := start(t, namedLibrary().Bucket(t), options{})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name string
		req  *skillsvcv1.SearchSkillsRequest
		want []string
	}{
		{"tags are indexed", &skillsvcv1.SearchSkillsRequest{Query: "notaria"}, []string{"/skills/legal/escritura"}},
		{"category", &skillsvcv1.SearchSkillsRequest{Query: "source code files", Category: proto.String("fmt")}, []string{"/skills/fmt/one", "/skills/fmt/two"}},
		{"flat skills", &skillsvcv1.SearchSkillsRequest{Query: "source code files review", Category: proto.String("")}, []string{"/skills/my-review"}},
		{"minimum relevance", &skillsvcv1.SearchSkillsRequest{Query: "csv kubernetes helm terraform ansible puppet", MinRelevance: 0.3}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.SearchSkills(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res.GetResults() {
				got = append(got, r.GetSkill().GetPath())
				if rel := r.GetRelevance(); rel <= 0 || rel > 1 || rel < tc.req.GetMinRelevance() {
					t.Errorf("%s relevance %v", r.GetSkill().GetPath(), rel)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("results %q, want %q", got, tc.want)
			}
		})
	}
	// Without the minimum the weak hit is there.
	res, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "csv kubernetes helm terraform ansible puppet"})
	if err != nil || len(res.GetResults()) != 1 || res.GetResults()[0].GetRelevance() >= 0.3 {
		t.Errorf("SearchSkills = %v, %v", res.GetResults(), err)
	}
	for _, bad := range []float64{-1, 2, math.NaN()} {
		_, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "csv", MinRelevance: bad})
		wantError(t, err, codes.InvalidArgument, "min_relevance")
	}
}

func TestExportSkillShebang(t *testing.T) {
	c := start(t, namedLibrary().Bucket(t), options{})
	msgs, err := export(asAlice(t), c.skills, &skillsvcv1.ExportSkillRequest{Path: "blogging"})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, m := range msgs {
		data = append(data, m.GetData()...)
	}
	got := untar(t, data)
	if !strings.HasPrefix(got["blog-post/tools/wordcount"], "0755 ") || !strings.HasPrefix(got["blog-post/SKILL.md"], "0644 ") || !strings.HasPrefix(got["blog-post/logo.png"], "0644 ") {
		t.Errorf("archive modes = %q", got)
	}
}
