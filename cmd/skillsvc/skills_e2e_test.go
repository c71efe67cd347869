package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestSkillsEndToEndMinIO uploads libraries the way users do (plain S3
// puts), then drives every SkillsService RPC through the real binary.
func TestSkillsEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	put := s3Put(t, srv, bucket)
	put("alice/skills/docs/pdf/SKILL.md", "---\nname: pdf\ndescription: Extract text and tables from PDF files.\nallowed-tools: Bash Read\nx-team: docs\n---\n# PDF\nRun scripts/extract.py on $ARGUMENTS.\n")
	put("alice/skills/docs/pdf/scripts/extract.py", "print('extract')\n")
	put("alice/skills/docs/pdf/references/forms.md", "# Forms\nFill forms carefully.\n")
	put("alice/skills/docs/pdf/assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00binary")
	put("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting.\n")
	put("alice/skills/broken/bad/SKILL.md", "---\nname: bad\n---\nno description\n")
	put("_shared/skills/docs/pdf/SKILL.md", "---\nname: pdf\ndescription: The shared PDF skill, overridden by alice.\n---\nshared\n")
	put("_shared/skills/data/csv/SKILL.md", "---\nname: csv\ndescription: Clean and analyze CSV spreadsheets.\n---\nUse pandas.\n")

	p := startBinary(t, []string{
		"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey,
		"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}, "--storage=s3", "--s3.bucket="+bucket, "--s3.endpoint="+srv.Endpoint, "--s3.path-style")
	conn := dial(t, p.addr)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")

	cats, err := sc.ListCategories(alice, &skillsvcv1.ListCategoriesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cats.GetCategories() {
		got = append(got, c.GetName()+":"+strconv.Itoa(int(c.GetSkillCount())))
	}
	if strings.Join(got, ",") != ":1,data:1,docs:1" {
		t.Errorf("ListCategories = %v", got)
	}

	list, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*skillsvcv1.SkillSummary{}
	for _, s := range list.GetSkills() {
		byName[s.GetName()] = s
	}
	if len(byName) != 3 || byName["pdf"].GetLayer() != "user" || byName["csv"].GetLayer() != "shared" || byName["notes"].GetCategory() != "" {
		t.Fatalf("ListSkills = %v", list.GetSkills())
	}
	if pdf := byName["pdf"]; pdf.GetPath() != "/skills/docs/pdf" || strings.Join(pdf.GetAllowedTools(), " ") != "Bash Read" ||
		pdf.GetExtraFields() != nil {
		t.Errorf("pdf summary = %v, want allowed tools and no extra fields (the basic view)", pdf)
	}
	full, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{Category: proto.String("docs"), View: skillsvcv1.SkillView_SKILL_VIEW_FULL})
	if err != nil || len(full.GetSkills()) != 1 || full.GetSkills()[0].GetExtraFields().GetFields()["x-team"].GetStringValue() != "docs" {
		t.Errorf("ListSkills(docs, full) = %v, %v; want pdf with its extra fields", full.GetSkills(), err)
	}
	withInvalid, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true})
	if err != nil || len(withInvalid.GetSkills()) != 4 {
		t.Errorf("ListSkills(include_invalid) = %d skills, %v", len(withInvalid.GetSkills()), err)
	}
	page, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{PageSize: 2})
	if err != nil || len(page.GetSkills()) != 2 || page.GetNextPageToken() == "" {
		t.Fatalf("first page = %v, %v", page, err)
	}
	page2, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{PageSize: 2, PageToken: page.GetNextPageToken()})
	if err != nil || len(page2.GetSkills()) != 1 || page2.GetNextPageToken() != "" {
		t.Errorf("second page = %v, %v", page2, err)
	}

	// Every listed location reads through the filesystem.
	for _, s := range list.GetSkills() {
		if _, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: s.GetLocation()}); err != nil {
			t.Errorf("Read(%s): %v", s.GetLocation(), err)
		}
	}

	block, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{})
	if err != nil || !strings.HasPrefix(block.GetText(), "<available_skills>") || block.GetIncluded() != 3 ||
		!strings.Contains(block.GetText(), "<location>/skills/data/csv/SKILL.md</location>") {
		t.Errorf("FormatSkills = %v, %v", block, err)
	}
	small, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{CharBudget: 200, Format: "markdown"})
	if err != nil || len([]rune(small.GetText())) > 200 || small.GetOmitted() == 0 {
		t.Errorf("FormatSkills(200) = %v, %v", small, err)
	}

	get, err := sc.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, f := range get.GetFiles() {
		files[f.GetPath()] = f.GetBinary()
	}
	if len(files) != 3 || !files["assets/logo.png"] || files["scripts/extract.py"] || !strings.HasPrefix(get.GetBody(), "# PDF") {
		t.Errorf("GetSkill = files %v body %q", files, get.GetBody())
	}
	_, err = sc.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "/skills/broken/bad"})
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	_, err = sc.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: "/skills/../bob/skills/x"})
	grpctest.WantCode(t, err, codes.InvalidArgument)

	r, err := sc.RenderSkill(alice, &skillsvcv1.RenderSkillRequest{Path: "/skills/docs/pdf", Arguments: "report.pdf"})
	if err != nil || r.GetText() != "Base directory for this skill: /skills/docs/pdf\n\n# PDF\nRun scripts/extract.py on report.pdf.\n" {
		t.Errorf("RenderSkill = %q, %v", r.GetText(), err)
	}

	f, err := sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "references/forms.md"})
	if err != nil || !strings.Contains(f.GetContent(), "Fill forms") {
		t.Errorf("ReadSkillFile = %v, %v", f, err)
	}
	_, err = sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "assets/logo.png"})
	grpctest.WantCode(t, err, codes.FailedPrecondition)
	_, err = sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "nope.md"})
	grpctest.WantCode(t, err, codes.NotFound)
	if err != nil && !strings.Contains(err.Error(), "references/forms.md") {
		t.Errorf("NotFound message does not list the files: %v", err)
	}

	hits, err := sc.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: "analyze a csv spreadsheet"})
	if err != nil || len(hits.GetResults()) == 0 || hits.GetResults()[0].GetSkill().GetName() != "csv" || hits.GetResults()[0].GetScore() <= 0 {
		t.Errorf("SearchSkills = %v, %v", hits, err)
	}

	gz := exportArchive(t, sc, alice, "/skills/docs/pdf")
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "pdf/SKILL.md,pdf/assets/logo.png,pdf/references/forms.md,pdf/scripts/extract.py" {
		t.Errorf("export entries = %v", names)
	}

	// Disable the shared csv skill: gone from listings, back with include_disabled.
	if _, err := sc.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: "csv", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	list, err = sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{})
	if err != nil || len(list.GetSkills()) != 2 {
		t.Errorf("after disable: %d skills, %v", len(list.GetSkills()), err)
	}
	list, err = sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{IncludeDisabled: true})
	if err != nil || len(list.GetSkills()) != 3 {
		t.Errorf("include_disabled: %d skills, %v", len(list.GetSkills()), err)
	}
	// bob sees only the shared library, with csv enabled.
	bob, err := sc.ListSkills(grpctest.AsCaller(ctx, "bob", "t1", ""), &skillsvcv1.ListSkillsRequest{})
	if err != nil || len(bob.GetSkills()) != 2 || bob.GetSkills()[0].GetLayer() != "shared" {
		t.Errorf("bob's skills = %v, %v", bob.GetSkills(), err)
	}
}

// TestSkillsCatalogFidelityEndToEndMinIO uploads, with plain S3 puts (no
// file modes), a library in the style of a public skills repository over a
// shared library written for an older S3-backed agent backend (display
// names, tags, deep folders), and checks through the real binary that every
// skill is reachable by what the listing shows and that the text handed to
// a model names only the caller's tools.
func TestSkillsCatalogFidelityEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	put := s3Put(t, srv, bucket)
	// alice: a public-repository style library.
	put("alice/skills/webapp-testing/SKILL.md", "---\nname: webapp-testing\ndescription: Test local web applications with Playwright; capture screenshots and browser logs.\nlicense: Apache-2.0\n---\n# Webapp testing\nRun `with_server.py --help` first.\n")
	put("alice/skills/webapp-testing/with_server.py", "#!/usr/bin/env python3\nprint('server')\n")
	put("alice/skills/webapp-testing/examples/console.png", "\x89PNG\r\n\x1a\n\x00\x00\x00binary")
	put("alice/skills/my-review/SKILL.md", "---\nname: code-review\ndescription: \"Alice's review checklist: tests first, then naming.\"\n---\nReview $ARGUMENTS against the checklist.\n")
	put("alice/skills/docs/brand-guidelines/SKILL.md", "---\nname: brand\ndescription: Apply the company's brand colors & typography to documents.\n---\n# Brand\n")
	put("alice/skills/docs/brand-v2/SKILL.md", "---\nname: brand\ndescription: A second copy of the brand skill.\n---\n# Brand v2\n")
	// The shared library, as an older S3-backed backend wrote it.
	put("_shared/skills/review/code-review/SKILL.md", "---\nname: code-review\ndescription: The SHARED review skill, hidden by alice's.\n---\nshared\n")
	put("_shared/skills/legal/escritura-compraventa/SKILL.md", "---\nname: Escritura de Compraventa\ndescription: Redacta escrituras de compraventa de inmuebles.\ntags: [notaria, inmuebles]\n---\n# Escritura\n")
	put("_shared/skills/legal/contratos/arrendamiento/SKILL.md", "---\nname: Contrato de Arrendamiento\ndescription: Redacta contratos de arrendamiento.\n---\n# Arrendamiento\n")
	put("_shared/skills/data/csv/SKILL.md", "---\nname: csv\ndescription: Clean and analyze CSV spreadsheets.\n---\nUse pandas.\n")

	p := startBinary(t, []string{
		"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey,
		"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"SKILLSVC_SKILLS_SEARCH_TOOL=skill_search",
	}, "--storage=s3", "--s3.bucket="+bucket, "--s3.endpoint="+srv.Endpoint, "--s3.path-style")
	conn := dial(t, p.addr)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")

	all, err := sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*skillsvcv1.SkillSummary{}
	var listed []string
	for _, s := range all.GetSkills() {
		byPath[s.GetPath()] = s
		listed = append(listed, s.GetPath()+"="+s.GetName())
	}
	// 2: the shared code-review is gone; 4: display-named skills are served,
	// the nested one reported; 3: both brand copies listed.
	if want := "/skills/data/csv=csv,/skills/docs/brand-guidelines=brand,/skills/docs/brand-v2=brand," +
		"/skills/legal/contratos/arrendamiento=arrendamiento,/skills/legal/escritura-compraventa=escritura-compraventa," +
		"/skills/my-review=code-review,/skills/webapp-testing=webapp-testing"; strings.Join(listed, ",") != want {
		t.Errorf("ListSkills(include_invalid) =\n  %s\nwant\n  %s", strings.Join(listed, ","), want)
	}
	if s := byPath["/skills/legal/escritura-compraventa"]; s.GetDisplayName() != "Escritura de Compraventa" || len(s.GetErrors()) != 0 {
		t.Errorf("display-named skill = %v", s)
	}
	if s := byPath["/skills/legal/contratos/arrendamiento"]; len(s.GetErrors()) == 0 || !strings.Contains(s.GetErrors()[0], "nested deeper") {
		t.Errorf("nested skill = %v", s)
	}
	// The warning is logged while the index loads; its line reaches the
	// test through the stderr pipe, so wait for it rather than race it.
	pollUntil(t, 10*time.Second, "the nested skill's warning in the log", func() bool {
		out := p.output()
		return strings.Contains(out, "nested too deep") && strings.Contains(out, "legal/contratos/arrendamiento")
	})
	for _, path := range []string{"/skills/docs/brand-guidelines", "/skills/docs/brand-v2"} {
		if w := strings.Join(byPath[path].GetWarnings(), " "); !strings.Contains(w, `name "brand" is also declared by`) {
			t.Errorf("%s warnings = %q", path, w)
		}
	}
	for _, s := range all.GetSkills() {
		if _, err := fsc.Read(alice, &skillsvcv1.ReadRequest{Path: s.GetLocation()}); err != nil {
			t.Errorf("Read(%s): %v", s.GetLocation(), err)
		}
	}
	_, err = fsc.Read(alice, &skillsvcv1.ReadRequest{Path: "/skills/review/code-review/SKILL.md"})
	grpctest.WantCode(t, err, codes.NotFound)

	// 1: every RPC by the names listed.
	for ref, path := range map[string]string{
		"code-review": "/skills/my-review", "brand": "/skills/docs/brand-guidelines",
		"escritura-compraventa": "/skills/legal/escritura-compraventa", "Escritura de Compraventa": "/skills/legal/escritura-compraventa",
	} {
		g, err := sc.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: ref})
		if err != nil || g.GetSkill().GetPath() != path {
			t.Errorf("GetSkill(%q) = %v, %v; want %s", ref, g.GetSkill().GetPath(), err, path)
		}
		if _, err := sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: ref, File: "SKILL.md"}); err != nil {
			t.Errorf("ReadSkillFile(%q): %v", ref, err)
		}
		if _, err := sc.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: ref, Enabled: true}); err != nil {
			t.Errorf("SetSkillEnabled(%q): %v", ref, err)
		}
	}
	// 2 and 7: alice's copy renders, with the worker's base directory.
	r, err := sc.RenderSkill(alice, &skillsvcv1.RenderSkillRequest{Path: "code-review", Arguments: "PR 7", BaseDir: "/sandbox/my-review"})
	if err != nil || r.GetText() != "Base directory for this skill: /sandbox/my-review\n\nReview PR 7 against the checklist.\n" {
		t.Errorf("RenderSkill = %q, %v", r.GetText(), err)
	}

	// 5 and 6: the prompt block.
	block, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{MaxSkills: 2, GroupByCategory: true})
	if err != nil || !strings.Contains(block.GetText(), "use skill_search to find them") || strings.Contains(block.GetText(), "SearchSkills") ||
		strings.Count(block.GetText(), "<name>code-review</name>") != 1 || !strings.Contains(block.GetText(), "<name>webapp-testing</name>") {
		t.Errorf("FormatSkills = %v\n%s", err, block.GetText())
	}
	full, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{})
	if err != nil || !strings.Contains(full.GetText(), "company's brand colors &amp; typography") {
		t.Errorf("FormatSkills escaping = %v\n%s", err, full.GetText())
	}
	yml, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{Format: "yaml", SearchTool: "find"})
	if err != nil || !strings.HasPrefix(yml.GetText(), "---\nname: brand\ndescription: Apply the company's brand colors & typography to documents.\nlocation: /skills/docs/brand-guidelines/SKILL.md\n---\n") ||
		!strings.Contains(yml.GetText(), "\ndescription: \"Alice's review checklist: tests first, then naming.\"\n") {
		t.Errorf("FormatSkills(yaml) = %v\n%s", err, yml.GetText())
	}
	_, err = sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{CharBudget: 10})
	grpctest.WantCode(t, err, codes.InvalidArgument)
	_, err = sc.ReadSkillFile(alice, &skillsvcv1.ReadSkillFileRequest{Path: "webapp-testing", File: "examples/console.png", DownloadTool: "fetch_file"})
	if grpctest.WantCode(t, err, codes.FailedPrecondition); err != nil && (!strings.Contains(err.Error(), "fetch it with fetch_file") || strings.Contains(err.Error(), "FilesystemService")) {
		t.Errorf("binary refusal = %v", err)
	}

	// 8: the shebang script outside scripts/ is executable in the export.
	gz := exportArchive(t, sc, alice, "webapp-testing")
	modes := map[string]int64{}
	for tr := tar.NewReader(gz); ; {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		modes[h.Name] = h.Mode
	}
	if modes["webapp-testing/with_server.py"] != 0o755 || modes["webapp-testing/SKILL.md"] != 0o644 || modes["webapp-testing/examples/console.png"] != 0o644 {
		t.Errorf("export modes = %v", modes)
	}

	// 9: tags, the category filter and the relevance cut-off.
	hits, err := sc.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: "notaria inmuebles"})
	if err != nil || len(hits.GetResults()) == 0 || hits.GetResults()[0].GetSkill().GetName() != "escritura-compraventa" || hits.GetResults()[0].GetRelevance() <= 0 {
		t.Errorf("SearchSkills(tags) = %v, %v", hits.GetResults(), err)
	}
	hits, err = sc.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: "csv spreadsheets", Category: aws.String("legal")})
	if err != nil || len(hits.GetResults()) != 0 {
		t.Errorf("SearchSkills(category legal) = %v, %v", hits.GetResults(), err)
	}
	hits, err = sc.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: "csv kubernetes helm terraform ansible", MinRelevance: 0.5})
	if err != nil || len(hits.GetResults()) != 0 {
		t.Errorf("SearchSkills(min_relevance) = %v, %v", hits.GetResults(), err)
	}

	// 10: a page token that is no position of this listing.
	_, err = sc.ListSkills(alice, &skillsvcv1.ListSkillsRequest{PageToken: "garbage"})
	grpctest.WantCode(t, err, codes.InvalidArgument)

	// bob sees the shared code-review, and the display-named skill.
	bob, err := sc.GetSkill(grpctest.AsCaller(ctx, "bob", "t1", ""), &skillsvcv1.GetSkillRequest{Path: "code-review"})
	if err != nil || bob.GetSkill().GetLayer() != "shared" {
		t.Errorf("bob's code-review = %v, %v", bob.GetSkill(), err)
	}
}

// exportArchive runs ExportSkill and returns the gzip stream of its chunks.
func exportArchive(t *testing.T, sc skillsvcv1.SkillsServiceClient, ctx context.Context, path string) *gzip.Reader {
	t.Helper()
	stream, err := sc.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		archive.Write(msg.GetData())
	}
	gz, err := gzip.NewReader(&archive)
	if err != nil {
		t.Fatal(err)
	}
	return gz
}
