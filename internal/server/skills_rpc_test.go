package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// The library every test here serves to alice: her own skills in two
// categories and one flat, an invalid one, and a shared skill.
const (
	pdfBody   = "# PDF\n\nRun scripts/extract.py on $ARGUMENTS.\n"
	pdfDesc   = "Extract text and tables from PDF files and fill PDF forms."
	pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
)

// listed are the valid skills, in ListSkills order (by path).
var listed = []string{"/skills/data/xlsx", "/skills/docs/docx", "/skills/docs/pdf", "/skills/git/commit", "/skills/lint"}

func library() *skillstest.Builder {
	b := skillstest.New()
	b.User("alice").
		Skill("docs/pdf", "", pdfDesc, pdfBody).
		File("docs/pdf/reference.md", "# Reference\n").
		File("docs/pdf/scripts/extract.py", "print('pdf')\n").
		File("docs/pdf/logo.png", pngHeader).
		Skill("docs/docx", "", "Create and edit Word documents.", "# DOCX\n").
		Skill("data/xlsx", "", "Read and write spreadsheets.", "# XLSX\n").
		Skill("lint", "", "Lint source code.", "# Lint\n").
		File("broken/SKILL.md", "no frontmatter here\n")
	b.Shared().Skill("git/commit", "", "Write commit messages.", "# Commit\n")
	return b
}

// startSkills serves library() from a fresh in-memory bucket.
func startSkills(t *testing.T, o options) (client, objstore.Bucket) {
	t.Helper()
	bucket := library().Bucket(t)
	return start(t, bucket, o), bucket
}

func paths(list []*skillsvcv1.SkillSummary) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.GetPath())
	}
	return out
}

// wantError checks an error's code, and that its message mentions what it
// should without naming a storage key.
func wantError(t *testing.T, err error, code codes.Code, mention string) {
	t.Helper()
	wantCode(t, "call", err, code)
	msg := status.Convert(err).Message()
	if !strings.Contains(msg, mention) {
		t.Errorf("message %q does not mention %q", msg, mention)
	}
	if strings.Contains(msg, "alice/") || strings.Contains(msg, skillstest.SharedPrefix) {
		t.Errorf("message %q leaks a storage key", msg)
	}
}

func TestSkillsUnauthenticated(t *testing.T) {
	c, bucket := startSkills(t, options{})
	before := keys(t, bucket)
	for _, id := range incompleteIdentities {
		for _, r := range everySkillsRPC {
			t.Run(id.name+" "+r.name, func(t *testing.T) {
				wantCode(t, r.name, r.call(as(t, id.md...), c.skills), codes.Unauthenticated)
			})
		}
	}
	if after := keys(t, bucket); !slices.Equal(before, after) {
		t.Errorf("unauthenticated calls changed the bucket from %v to %v", before, after)
	}
	// The same calls with an identity succeed, so only the identity failed.
	for _, r := range everySkillsRPC {
		t.Run("alice "+r.name, func(t *testing.T) {
			if err := r.call(asAlice(t), c.skills); err != nil {
				t.Errorf("%s as alice: %v", r.name, err)
			}
		})
	}
}

func TestSkillsInternalErrorsHideDetails(t *testing.T) {
	var logs syncBuffer
	c := start(t, failingBucket(t), options{log: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, r := range everySkillsRPC {
		t.Run(r.name, func(t *testing.T) {
			err := r.call(asAlice(t), c.skills)
			wantCode(t, r.name, err, codes.Internal)
			msg := status.Convert(err).Message()
			for _, s := range []string{"disk on fire", "secret-key", "alice/"} {
				if strings.Contains(msg, s) {
					t.Errorf("%s: Internal message %q leaks %q", r.name, msg, s)
				}
			}
		})
	}
	if got := logs.String(); !strings.Contains(got, "secret-key") || !strings.Contains(got, "/skillsvc.v1.SkillsService/GetSkill") {
		t.Errorf("server log does not record the internal error with its method:\n%s", got)
	}
}

func TestListCategories(t *testing.T) {
	c, _ := startSkills(t, options{})
	res, err := c.skills.ListCategories(asAlice(t), &skillsvcv1.ListCategoriesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cat := range res.GetCategories() {
		got = append(got, fmt.Sprintf("%s=%d", cat.GetName(), cat.GetSkillCount()))
	}
	// Flat skills count under ""; the invalid one is not counted.
	if want := "=1,data=1,docs=2,git=1"; strings.Join(got, ",") != want {
		t.Errorf("ListCategories = %v, want %s", got, want)
	}
}

// listAll pages through ListSkills from req, checking every page holds at
// most size skills and every page but the last exactly size.
func listAll(ctx context.Context, t *testing.T, c skillsvcv1.SkillsServiceClient, req *skillsvcv1.ListSkillsRequest, size int) (all []*skillsvcv1.SkillSummary, pages int) {
	t.Helper()
	req = proto.Clone(req).(*skillsvcv1.ListSkillsRequest)
	for {
		res, err := c.ListSkills(ctx, req)
		if err != nil {
			t.Fatalf("ListSkills page %d: %v", pages+1, err)
		}
		pages++
		n := len(res.GetSkills())
		if n > size || (res.GetNextPageToken() != "" && n != size) {
			t.Errorf("page %d holds %d skills (more follow: %v), page size is %d", pages, n, res.GetNextPageToken() != "", size)
		}
		all = append(all, res.GetSkills()...)
		if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
			return all, pages
		}
		if pages > 100 {
			t.Fatal("ListSkills never ends")
		}
	}
}

func TestListSkills(t *testing.T) {
	const maxPage = 3
	c, _ := startSkills(t, options{skills: func(cfg *skills.Config) { cfg.MaxPageSize = maxPage }})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name  string
		req   *skillsvcv1.ListSkillsRequest
		size  int // the page size in effect
		want  []string
		pages int
	}{
		{"default page size is at most the max", &skillsvcv1.ListSkillsRequest{}, maxPage, listed, 2},
		{"pages of one", &skillsvcv1.ListSkillsRequest{PageSize: 1}, 1, listed, 5},
		{"pages of two", &skillsvcv1.ListSkillsRequest{PageSize: 2}, 2, listed, 3},
		{"page size above the max is clamped", &skillsvcv1.ListSkillsRequest{PageSize: 1000}, maxPage, listed, 2},
		{"category", &skillsvcv1.ListSkillsRequest{Category: proto.String("docs"), PageSize: 1}, 1, []string{"/skills/docs/docx", "/skills/docs/pdf"}, 2},
		{"shared category", &skillsvcv1.ListSkillsRequest{Category: proto.String("git")}, maxPage, []string{"/skills/git/commit"}, 1},
		{"empty category is flat skills", &skillsvcv1.ListSkillsRequest{Category: proto.String("")}, maxPage, []string{"/skills/lint"}, 1},
		{"unknown category", &skillsvcv1.ListSkillsRequest{Category: proto.String("nope")}, maxPage, nil, 1},
		{"include invalid", &skillsvcv1.ListSkillsRequest{IncludeInvalid: true, PageSize: 2}, 2, append([]string{"/skills/broken"}, listed...), 3},
		{"flat including invalid", &skillsvcv1.ListSkillsRequest{Category: proto.String(""), IncludeInvalid: true, PageSize: 1}, 1, []string{"/skills/broken", "/skills/lint"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all, pages := listAll(ctx, t, c.skills, tc.req, tc.size)
			if got := paths(all); !slices.Equal(got, tc.want) || pages != tc.pages {
				t.Errorf("listed %v in %d pages, want %v in %d", got, pages, tc.want, tc.pages)
			}
		})
	}

	t.Run("summaries", func(t *testing.T) {
		all, _ := listAll(ctx, t, c.skills, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true}, maxPage)
		by := map[string]*skillsvcv1.SkillSummary{}
		for _, s := range all {
			by[s.GetPath()] = s
		}
		pdf := by["/skills/docs/pdf"]
		if pdf.GetName() != "pdf" || pdf.GetLocation() != "/skills/docs/pdf/SKILL.md" || pdf.GetCategory() != "docs" ||
			pdf.GetLayer() != skillview.LayerUser || pdf.GetDescription() != pdfDesc || pdf.GetEtag() == "" || pdf.GetDisabled() || len(pdf.GetErrors()) != 0 {
			t.Errorf("pdf summary = %v", pdf)
		}
		if commit := by["/skills/git/commit"]; commit.GetLayer() != skillview.LayerShared || commit.GetName() != "commit" {
			t.Errorf("shared commit summary = %v", commit)
		}
		if broken := by["/skills/broken"]; len(broken.GetErrors()) == 0 {
			t.Errorf("invalid skill summary = %v, want its errors", broken)
		}
	})

	// A token continues only the listing it came from.
	first, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{Category: proto.String("docs"), PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	token := first.GetNextPageToken()
	if token == "" {
		t.Fatal("no next page token after the first of two docs skills")
	}
	for _, tc := range []struct {
		name    string
		req     *skillsvcv1.ListSkillsRequest
		code    codes.Code
		mention string
	}{
		{"negative page size", &skillsvcv1.ListSkillsRequest{PageSize: -1}, codes.InvalidArgument, "page_size"},
		{"garbage token", &skillsvcv1.ListSkillsRequest{PageToken: "garbage"}, codes.InvalidArgument, "page_token"},
		{"token with another category", &skillsvcv1.ListSkillsRequest{Category: proto.String("data"), PageToken: token}, codes.InvalidArgument, "page_token"},
		{"token without the category", &skillsvcv1.ListSkillsRequest{PageToken: token}, codes.InvalidArgument, "page_token"},
		{"token with the empty category", &skillsvcv1.ListSkillsRequest{Category: proto.String(""), PageToken: token}, codes.InvalidArgument, "page_token"},
		{"token with include_disabled", &skillsvcv1.ListSkillsRequest{Category: proto.String("docs"), IncludeDisabled: true, PageToken: token}, codes.InvalidArgument, "page_token"},
		{"token with include_invalid", &skillsvcv1.ListSkillsRequest{Category: proto.String("docs"), IncludeInvalid: true, PageToken: token}, codes.InvalidArgument, "page_token"},
		{"token with the same filters", &skillsvcv1.ListSkillsRequest{Category: proto.String("docs"), PageSize: 5, PageToken: token}, codes.OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.ListSkills(ctx, tc.req)
			wantError(t, err, tc.code, tc.mention)
			if tc.code == codes.OK && !slices.Equal(paths(res.GetSkills()), []string{"/skills/docs/pdf"}) {
				t.Errorf("second docs page = %v, want pdf", paths(res.GetSkills()))
			}
		})
	}
}

func TestFormatSkills(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	maxBudget := skills.DefaultConfig().MaxCharBudget
	xmlPDF := "<skill>\n<name>pdf</name>\n<description>" + pdfDesc + "</description>\n<location>/skills/docs/pdf/SKILL.md</location>\n</skill>\n"
	mdPDF := "- **pdf** (/skills/docs/pdf/SKILL.md): " + pdfDesc + "\n"
	for _, tc := range []struct {
		name              string
		req               *skillsvcv1.FormatSkillsRequest
		included, omitted int32
		has, hasNot       []string
	}{
		{"xml by default", &skillsvcv1.FormatSkillsRequest{}, 5, 0,
			[]string{"<available_skills>\n", xmlPDF, "<name>commit</name>", "</available_skills>\n"}, []string{"broken"}},
		{"xml", &skillsvcv1.FormatSkillsRequest{Format: skillmd.FormatXML}, 5, 0, []string{xmlPDF}, []string{"**pdf**"}},
		{"markdown", &skillsvcv1.FormatSkillsRequest{Format: skillmd.FormatMarkdown}, 5, 0,
			[]string{"## Available skills\n", mdPDF, "- **lint** (/skills/lint/SKILL.md): Lint source code.\n"}, []string{"<skill>", "broken"}},
		{"category", &skillsvcv1.FormatSkillsRequest{Category: proto.String("docs")}, 2, 0,
			[]string{"<name>pdf</name>", "<name>docx</name>"}, []string{"<name>lint</name>", "<name>xlsx</name>"}},
		{"empty category is flat skills", &skillsvcv1.FormatSkillsRequest{Category: proto.String(""), Format: skillmd.FormatMarkdown}, 1, 0,
			[]string{"**lint**"}, []string{"**pdf**"}},
		{"max skills", &skillsvcv1.FormatSkillsRequest{MaxSkills: 2}, 2, 3,
			[]string{"<name>xlsx</name>", "<name>docx</name>", "3 more skills not shown"}, []string{"<name>pdf</name>"}},
		{"budget at the max", &skillsvcv1.FormatSkillsRequest{CharBudget: maxBudget}, 5, 0, []string{xmlPDF}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.FormatSkills(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.GetIncluded() != tc.included || res.GetOmitted() != tc.omitted {
				t.Errorf("included %d omitted %d, want %d and %d", res.GetIncluded(), res.GetOmitted(), tc.included, tc.omitted)
			}
			for _, s := range tc.has {
				if !strings.Contains(res.GetText(), s) {
					t.Errorf("text does not contain %q:\n%s", s, res.GetText())
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(res.GetText(), s) {
					t.Errorf("text contains %q:\n%s", s, res.GetText())
				}
			}
		})
	}
	for _, tc := range []struct {
		name    string
		req     *skillsvcv1.FormatSkillsRequest
		mention string
	}{
		{"budget above the max", &skillsvcv1.FormatSkillsRequest{CharBudget: maxBudget + 1}, "char_budget"},
		{"negative budget", &skillsvcv1.FormatSkillsRequest{CharBudget: -1}, "char_budget"},
		{"negative max skills", &skillsvcv1.FormatSkillsRequest{MaxSkills: -1}, "max_skills"},
		{"unknown format", &skillsvcv1.FormatSkillsRequest{Format: "html"}, "html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.skills.FormatSkills(ctx, tc.req)
			wantError(t, err, codes.InvalidArgument, tc.mention)
		})
	}
}

func TestGetSkill(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	wantFiles := []string{
		fmt.Sprintf("logo.png %d binary", len(pngHeader)),
		"reference.md 12 text",
		"scripts/extract.py 13 text",
	}
	for _, tc := range []struct{ name, ref string }{
		{"by name", "pdf"},
		{"by folder", "docs/pdf"},
		{"by folder path", "/skills/docs/pdf"},
		{"by SKILL.md path", "/skills/docs/pdf/SKILL.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: tc.ref})
			if err != nil {
				t.Fatal(err)
			}
			sk := res.GetSkill()
			if sk.GetPath() != "/skills/docs/pdf" || sk.GetName() != "pdf" || sk.GetDescription() != pdfDesc || sk.GetLayer() != skillview.LayerUser || sk.GetEtag() == "" {
				t.Errorf("skill = %v", sk)
			}
			if res.GetRaw() != skillstest.SkillMD("pdf", pdfDesc, pdfBody) || res.GetBody() != pdfBody {
				t.Errorf("raw %q body %q", res.GetRaw(), res.GetBody())
			}
			if fm := res.GetFrontmatter().AsMap(); fm["name"] != "pdf" || fm["description"] != pdfDesc {
				t.Errorf("frontmatter = %v", fm)
			}
			var files []string
			for _, f := range res.GetFiles() {
				kind := "text"
				if f.GetBinary() {
					kind = "binary"
				}
				files = append(files, fmt.Sprintf("%s %d %s", f.GetPath(), f.GetSize(), kind))
			}
			if !slices.Equal(files, wantFiles) {
				t.Errorf("files = %q, want %q", files, wantFiles)
			}
		})
	}
	t.Run("shared skill", func(t *testing.T) {
		res, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "commit"})
		if err != nil {
			t.Fatal(err)
		}
		if sk := res.GetSkill(); sk.GetPath() != "/skills/git/commit" || sk.GetLayer() != skillview.LayerShared || len(res.GetFiles()) != 0 {
			t.Errorf("GetSkill(commit) = %v", res)
		}
	})
	for _, tc := range []struct {
		name, ref string
		code      codes.Code
		mention   string
	}{
		{"missing name", "nope", codes.NotFound, "nope"},
		{"missing folder path", "/skills/docs/nope", codes.NotFound, "/skills/docs/nope"},
		{"category is no skill", "/skills/docs", codes.NotFound, "/skills/docs"},
		{"invalid skill", "broken", codes.FailedPrecondition, "/skills/broken"},
		{"empty", "", codes.InvalidArgument, "required"},
		{"outside the mount", "/workspace/pdf", codes.InvalidArgument, "/workspace/pdf"},
		{"escaping path", "/skills/docs/../lint", codes.InvalidArgument, "/skills/docs/../lint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: tc.ref})
			wantError(t, err, tc.code, tc.mention)
		})
	}
}

func TestRenderSkill(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name, ref, args string
		want            string
	}{
		{"arguments replace the placeholder", "pdf", "report.pdf",
			"Base directory for this skill: /skills/docs/pdf\n\n# PDF\n\nRun scripts/extract.py on report.pdf.\n"},
		{"every placeholder", "/skills/docs/pdf", "a $ARGUMENTS b",
			"Base directory for this skill: /skills/docs/pdf\n\n# PDF\n\nRun scripts/extract.py on a $ARGUMENTS b.\n"},
		{"no arguments", "pdf", "", "Base directory for this skill: /skills/docs/pdf\n\n" + pdfBody},
		{"arguments without a placeholder are appended", "lint", "src/",
			"Base directory for this skill: /skills/lint\n\n# Lint\n\nARGUMENTS: src/\n"},
		{"shared skill", "git/commit", "", "Base directory for this skill: /skills/git/commit\n\n# Commit\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: tc.ref, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if res.GetText() != tc.want {
				t.Errorf("text = %q, want %q", res.GetText(), tc.want)
			}
			if !strings.HasPrefix(tc.want, "Base directory for this skill: "+res.GetSkill().GetPath()+"\n") {
				t.Errorf("skill = %v, not the rendered one", res.GetSkill())
			}
		})
	}
	for _, tc := range []struct {
		name, ref string
		code      codes.Code
	}{
		{"missing", "nope", codes.NotFound},
		{"invalid skill", "broken", codes.FailedPrecondition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: tc.ref, Arguments: "x"})
			wantError(t, err, tc.code, tc.ref)
		})
	}
}

func TestReadSkillFile(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name, ref, file string
		wantPath        string
		wantContent     string
	}{
		{"text file", "pdf", "reference.md", "/skills/docs/pdf/reference.md", "# Reference\n"},
		{"without .md", "pdf", "reference", "/skills/docs/pdf/reference.md", "# Reference\n"},
		{"in a subfolder with ./", "/skills/docs/pdf", "./scripts/extract.py", "/skills/docs/pdf/scripts/extract.py", "print('pdf')\n"},
		{"SKILL.md of a shared skill", "commit", "SKILL.md", "/skills/git/commit/SKILL.md",
			skillstest.SkillMD("commit", "Write commit messages.", "# Commit\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: tc.ref, File: tc.file})
			if err != nil {
				t.Fatal(err)
			}
			if res.GetPath() != tc.wantPath || res.GetContent() != tc.wantContent {
				t.Errorf("ReadSkillFile = %q %q, want %q %q", res.GetPath(), res.GetContent(), tc.wantPath, tc.wantContent)
			}
			// Every path the catalog returns reads the same through the VFS.
			dl, err := download(ctx, c.fs, &skillsvcv1.DownloadRequest{Path: res.GetPath()})
			if err != nil || len(dl) != 1 || string(dl[0].GetData()) != tc.wantContent {
				t.Errorf("Download(%s) = %v, %v", res.GetPath(), dl, err)
			}
		})
	}
	for _, tc := range []struct {
		name, ref, file string
		code            codes.Code
		mention         string
	}{
		{"binary file", "pdf", "logo.png", codes.FailedPrecondition, "/skills/docs/pdf/logo.png"},
		{"unknown file names the files", "pdf", "nope.md", codes.NotFound, "reference.md"},
		{"unknown skill", "nope", "reference.md", codes.NotFound, "nope"},
		{"parent escape", "pdf", "../docx/SKILL.md", codes.InvalidArgument, "../docx/SKILL.md"},
		{"escape inside the path", "pdf", "scripts/../../docx/SKILL.md", codes.InvalidArgument, "scripts/../../docx/SKILL.md"},
		{"absolute path", "pdf", "/etc/passwd", codes.InvalidArgument, "/etc/passwd"},
		{"empty file", "pdf", "", codes.InvalidArgument, "file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: tc.ref, File: tc.file})
			wantError(t, err, tc.code, tc.mention)
		})
	}
}

func TestSearchSkills(t *testing.T) {
	const maxResults = 3
	c, _ := startSkills(t, options{skills: func(cfg *skills.Config) { cfg.MaxSearchResults = maxResults }})
	ctx := asAlice(t)
	maxQuery := skills.DefaultConfig().MaxQueryBytes
	// every matches all five listed skills.
	const every = "documents pdf spreadsheets commit lint"
	for _, tc := range []struct {
		name  string
		req   *skillsvcv1.SearchSkillsRequest
		first string // "" when nothing matches
		n     int
	}{
		{"obvious hit first", &skillsvcv1.SearchSkillsRequest{Query: "extract the tables from this PDF"}, "/skills/docs/pdf", 1},
		{"plural folds onto singular", &skillsvcv1.SearchSkillsRequest{Query: "spreadsheet"}, "/skills/data/xlsx", 1},
		{"shared skill", &skillsvcv1.SearchSkillsRequest{Query: "write a commit message"}, "/skills/git/commit", 2},
		{"no match", &skillsvcv1.SearchSkillsRequest{Query: "zebra"}, "", 0},
		{"limit", &skillsvcv1.SearchSkillsRequest{Query: every, Limit: 1}, "", 1},
		{"default limit is at most the max", &skillsvcv1.SearchSkillsRequest{Query: every}, "", maxResults},
		{"limit above the max is clamped", &skillsvcv1.SearchSkillsRequest{Query: every, Limit: 1000}, "", maxResults},
		{"query at the max length", &skillsvcv1.SearchSkillsRequest{Query: strings.Repeat("x", maxQuery)}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.SearchSkills(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got := res.GetResults()
			if len(got) != tc.n {
				t.Errorf("%d results, want %d: %v", len(got), tc.n, got)
			}
			if tc.first != "" && (len(got) == 0 || got[0].GetSkill().GetPath() != tc.first) {
				t.Errorf("results %v, want %s first", got, tc.first)
			}
			for i, r := range got {
				if r.GetScore() <= 0 || (i > 0 && r.GetScore() > got[i-1].GetScore()) {
					t.Errorf("result %d scores %v after %v; want positive, descending scores", i, r.GetScore(), got[max(i-1, 0)].GetScore())
				}
			}
		})
	}
	for _, tc := range []struct {
		name    string
		req     *skillsvcv1.SearchSkillsRequest
		mention string
	}{
		{"empty query", &skillsvcv1.SearchSkillsRequest{}, "query"},
		{"query too long", &skillsvcv1.SearchSkillsRequest{Query: strings.Repeat("x", maxQuery+1)}, "query"},
		{"negative limit", &skillsvcv1.SearchSkillsRequest{Query: "pdf", Limit: -1}, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.skills.SearchSkills(ctx, tc.req)
			wantError(t, err, codes.InvalidArgument, tc.mention)
		})
	}
}

// untar reads a tar.gz into name → "mode content".
func untar(t *testing.T, data []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = fmt.Sprintf("%04o %s", h.Mode, body)
	}
}

func TestExportSkill(t *testing.T) {
	const chunkSize = 64 // so an export spans several messages
	c, _ := startSkills(t, options{vfs: func(cfg *vfs.Config) { cfg.ChunkSize = chunkSize }})
	ctx := asAlice(t)
	for _, tc := range []struct {
		name, ref string
		want      map[string]string
	}{
		{"user skill with scripts", "pdf", map[string]string{
			"pdf/SKILL.md":           "0644 " + skillstest.SkillMD("pdf", pdfDesc, pdfBody),
			"pdf/logo.png":           "0644 " + pngHeader,
			"pdf/reference.md":       "0644 # Reference\n",
			"pdf/scripts/extract.py": "0644 print('pdf')\n", // no mode recorded, no "#!": under scripts/ is no reason
		}},
		{"shared skill by path", "/skills/git/commit", map[string]string{
			"commit/SKILL.md": "0644 " + skillstest.SkillMD("commit", "Write commit messages.", "# Commit\n"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: tc.ref})
			if err != nil {
				t.Fatal(err)
			}
			var data []byte
			for i, m := range msgs {
				if n := len(m.GetData()); n == 0 || n > chunkSize || (i < len(msgs)-1 && n != chunkSize) {
					t.Errorf("message %d of %d carries %d bytes, chunk size is %d", i, len(msgs), n, chunkSize)
				}
				data = append(data, m.GetData()...)
			}
			if len(msgs) < 2 {
				t.Errorf("%d messages for %d bytes in chunks of %d", len(msgs), len(data), chunkSize)
			}
			got := untar(t, data)
			if len(got) != len(tc.want) {
				t.Errorf("archive holds %d entries, want %d: %q", len(got), len(tc.want), got)
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("entry %s = %q, want %q", name, got[name], want)
				}
			}
		})
	}
	for _, tc := range []struct {
		name, ref string
		code      codes.Code
	}{
		{"missing skill", "nope", codes.NotFound},
		{"invalid skill", "broken", codes.FailedPrecondition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: tc.ref})
			wantError(t, err, tc.code, tc.ref)
			if len(msgs) != 0 {
				t.Errorf("%d messages before the error", len(msgs))
			}
		})
	}
}

// TestSetSkillEnabled takes steps in order, each seeing the settings the
// previous ones left.
func TestSetSkillEnabled(t *testing.T) {
	c, _ := startSkills(t, options{})
	ctx := asAlice(t)
	without := slices.DeleteFunc(slices.Clone(listed), func(p string) bool { return p == "/skills/docs/pdf" })
	for _, tc := range []struct {
		name         string
		req          *skillsvcv1.SetSkillEnabledRequest
		wantDisabled bool
		listed       []string // by ListSkills without include_disabled
	}{
		{"disable", &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: false}, true, without},
		{"disable again", &skillsvcv1.SetSkillEnabledRequest{Path: "/skills/docs/pdf", Enabled: false}, true, without},
		{"re-enable", &skillsvcv1.SetSkillEnabledRequest{Path: "/skills/docs/pdf/SKILL.md", Enabled: true}, false, listed},
		{"enable an enabled skill", &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: true}, false, listed},
		{"disable a shared skill", &skillsvcv1.SetSkillEnabledRequest{Path: "commit", Enabled: false}, true,
			[]string{"/skills/data/xlsx", "/skills/docs/docx", "/skills/docs/pdf", "/skills/lint"}},
		{"re-enable a shared skill", &skillsvcv1.SetSkillEnabledRequest{Path: "git/commit", Enabled: true}, false, listed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.skills.SetSkillEnabled(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.GetSkill().GetDisabled() != tc.wantDisabled {
				t.Errorf("SetSkillEnabled = %v, want disabled %v", res.GetSkill(), tc.wantDisabled)
			}
			list, _ := listAll(ctx, t, c.skills, &skillsvcv1.ListSkillsRequest{}, 100)
			if got := paths(list); !slices.Equal(got, tc.listed) {
				t.Errorf("ListSkills = %v, want %v", got, tc.listed)
			}
			all, _ := listAll(ctx, t, c.skills, &skillsvcv1.ListSkillsRequest{IncludeDisabled: true}, 100)
			if got := paths(all); !slices.Equal(got, listed) {
				t.Errorf("ListSkills with include_disabled = %v, want %v", got, listed)
			}
			for _, s := range all {
				if want := !slices.Contains(tc.listed, s.GetPath()); s.GetDisabled() != want {
					t.Errorf("%s disabled = %v, want %v", s.GetPath(), s.GetDisabled(), want)
				}
			}
			// The other listings leave disabled skills out too.
			block, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
			if err != nil || int(block.GetIncluded()) != len(tc.listed) {
				t.Errorf("FormatSkills = %v, %v; want %d skills", block, err, len(tc.listed))
			}
		})
	}
	t.Run("disable a missing skill", func(t *testing.T) {
		_, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "nope", Enabled: false})
		wantError(t, err, codes.NotFound, "nope")
	})
	t.Run("re-enable a skill that is gone", func(t *testing.T) {
		res, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: "gone", Enabled: true})
		if err != nil || res.GetSkill().GetName() != "gone" || res.GetSkill().GetDisabled() {
			t.Errorf("SetSkillEnabled(gone, true) = %v, %v", res, err)
		}
	})
	t.Run("empty path", func(t *testing.T) {
		_, err := c.skills.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Enabled: false})
		wantError(t, err, codes.InvalidArgument, "required")
	})
}

// A library whose skills carry large frontmatter pages by bytes, not only
// by count: every page fits the budget (and so a client's default 4 MiB
// receive limit), and paging still lists each skill once. The full view,
// where the frontmatter's unknown fields (here 48 KB of notes) are listed.
func TestListSkillsPageBytes(t *testing.T) {
	const n = 120
	b := largeFrontmatter(n)
	for _, tc := range []struct {
		name     string
		budget   int // 0: the default
		pageSize int32
		perPage  int // most skills a page may hold
	}{
		{"default budget, default page size", 0, 0, 100},
		{"default budget, largest page size", 0, 1000, 1000},
		{"a budget of three skills", 150 << 10, 50, 3},
		{"a budget below one skill", 1 << 10, 50, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := skills.DefaultConfig().MaxPageBytes
			if tc.budget != 0 {
				budget = tc.budget
			}
			c := start(t, b.Bucket(t), options{skills: func(c *skills.Config) { c.MaxPageBytes = budget }})
			ctx := asAlice(t)
			seen := map[string]int{}
			pages := 0
			for token := ""; ; pages++ {
				// The client keeps gRPC's default 4 MiB receive limit.
				res, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: tc.pageSize, PageToken: token, View: skillsvcv1.SkillView_SKILL_VIEW_FULL})
				if err != nil {
					t.Fatalf("page %d: %v", pages, err)
				}
				if got := len(res.GetSkills()); got == 0 || got > tc.perPage {
					t.Fatalf("page %d holds %d skills, want 1 to %d", pages, got, tc.perPage)
				}
				if size := proto.Size(res); size > budget && len(res.GetSkills()) > 1 {
					t.Fatalf("page %d is %d bytes, over the %d-byte budget", pages, size, budget)
				}
				for _, s := range res.GetSkills() {
					seen[s.GetName()]++
				}
				if token = res.GetNextPageToken(); token == "" {
					break
				}
			}
			if len(seen) != n {
				t.Fatalf("listed %d distinct skills in %d pages, want %d", len(seen), pages+1, n)
			}
			for name, k := range seen {
				if k != 1 {
					t.Errorf("%s listed %d times", name, k)
				}
			}
		})
	}
}

// largeFrontmatter is a library of n skills for alice, each with about
// 47 KiB of extra frontmatter: 100 of them make a 4.8 MB reply.
func largeFrontmatter(n int) *skillstest.Builder {
	notes := strings.Repeat("lorem ipsum ", 4000)
	b := skillstest.New()
	for i := range n {
		name := fmt.Sprintf("s%03d", i)
		b.User("alice").File("big/"+name+"/SKILL.md", "---\nname: "+name+"\ndescription: A skill with long notes.\nnotes: "+notes+"\n---\n# "+name+"\n")
	}
	return b
}

// SearchSkills keeps its reply within the same byte budget as ListSkills,
// dropping the weakest hits and saying so.
func TestSearchSkillsReplyBytes(t *testing.T) {
	b := largeFrontmatter(120)
	for _, tc := range []struct {
		name      string
		budget    int // 0: the default
		limit     int32
		truncated bool
		most      int // results the reply may hold
	}{
		{"default budget, most results", 0, 100, true, 99},
		{"default budget, a few results", 0, 10, false, 10},
		{"a budget below one skill", 1 << 10, 10, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := skills.DefaultConfig().MaxPageBytes
			if tc.budget != 0 {
				budget = tc.budget
			}
			c := start(t, b.Bucket(t), options{skills: func(c *skills.Config) { c.MaxPageBytes = budget }})
			// The client keeps gRPC's default 4 MiB receive limit.
			res, err := c.skills.SearchSkills(asAlice(t), &skillsvcv1.SearchSkillsRequest{Query: "long notes", Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			got := len(res.GetResults())
			if got == 0 || got > tc.most || res.GetTruncated() != tc.truncated {
				t.Fatalf("%d results, truncated %v; want 1 to %d, truncated %v", got, res.GetTruncated(), tc.most, tc.truncated)
			}
			if size := proto.Size(res); size > budget && got > 1 {
				t.Fatalf("reply is %d bytes, over the %d-byte budget", size, budget)
			}
			if !tc.truncated && got != int(tc.limit) {
				t.Fatalf("%d results, want all %d asked for", got, tc.limit)
			}
		})
	}
}
