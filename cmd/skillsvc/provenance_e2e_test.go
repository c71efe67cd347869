package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestProvenanceEverySurfaceEndToEnd: --library.scan=warn,shared=off on
// MinIO. Alice publishes one skill and uploads two with `aws s3 cp` (one
// clean, one crafted malicious); a skill is uploaded to the organization's
// library, which does not scan. Once the background scans are done, each
// skill's provenance is the same in ListSkills (basic and full views),
// SearchSkills, GetSkill, the JSON gateway's ListSkills, MCP skills/get and
// skills/list, and the MCP search_skills tool's _meta (ListSkills and
// SearchSkills with include_provenance, without it none): the published
// version's, and for the uploads out_of_band with the verdict of their
// background scan ("unscanned" where the policy is off).
func TestProvenanceEverySurfaceEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--library.scan=warn,shared=off")...)
	conn := dial(t, p.addr)
	lib, sk := skillsvcv1.NewLibraryServiceClient(conn), skillsvcv1.NewSkillsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")

	r, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: "notes"}, map[string]string{
		"SKILL.md": skillMDOf("notes", "Summarize meeting notes into action items.", "List the decisions and the owners.\n")})
	if err != nil {
		t.Fatal(err)
	}
	upload := func(name, desc, dest string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skillMDOf(name, desc, "Follow the steps.\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		awsCp(t, srv, dir, "s3://"+bucket+"/"+dest+"/")
	}
	upload("release-notes", "Write release notes from merged changes.", "alice/skills/release-notes")
	upload("changelog", "Keep a changelog of every release.", "_shared/skills/changelog")
	awsCp(t, srv, filepath.Join(maliciousSkills, "hidden-unicode-tags"), "s3://"+bucket+"/alice/skills/hidden-unicode-tags/")
	md, err := os.ReadFile(filepath.Join(maliciousSkills, "hidden-unicode-tags", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := scan.Skill(ctx, []scan.File{{Path: "SKILL.md", Data: md}}, scan.DefaultLimits)
	if err != nil || rep.Verdict == scan.Clean {
		t.Fatalf("the crafted skill's verdict: %v, %v", rep.Verdict, err)
	}

	uploaded := func(verdict string) *skillsvcv1.Provenance {
		return &skillsvcv1.Provenance{ScanVerdict: verdict, Signature: "unsigned", OutOfBand: true}
	}
	want := map[string]*skillsvcv1.Provenance{
		"notes":               {Version: r.GetVersion().GetId(), Publisher: "alice", ScanVerdict: "clean", Signature: "unsigned"},
		"release-notes":       uploaded("clean"),
		"hidden-unicode-tags": uploaded(string(rep.Verdict)),
		"changelog":           uploaded("unscanned"),
	}
	listed := func(req *skillsvcv1.ListSkillsRequest) map[string]*skillsvcv1.Provenance {
		t.Helper()
		res, err := sk.ListSkills(alice, req)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*skillsvcv1.Provenance{}
		for _, s := range res.GetSkills() {
			out[s.GetName()] = s.GetProvenance()
		}
		return out
	}
	// Each library's index sees its uploads in its own time.
	pollUntil(t, time.Minute, "every upload listed, alice's with their scan verdicts", func() bool {
		got := listed(&skillsvcv1.ListSkillsRequest{IncludeProvenance: true})
		return got["changelog"] != nil && proto.Equal(got["release-notes"], want["release-notes"]) && proto.Equal(got["hidden-unicode-tags"], want["hidden-unicode-tags"])
	})

	check := func(surface, name string, got *skillsvcv1.Provenance) {
		t.Helper()
		if !proto.Equal(got, want[name]) {
			t.Errorf("%s: %s's provenance = %v, want %v", surface, name, got, want[name])
		}
	}
	for _, view := range []skillsvcv1.SkillView{skillsvcv1.SkillView_SKILL_VIEW_BASIC, skillsvcv1.SkillView_SKILL_VIEW_FULL} {
		got := listed(&skillsvcv1.ListSkillsRequest{View: view, IncludeProvenance: true})
		for name := range want {
			check("ListSkills "+view.String(), name, got[name])
		}
	}
	// Not asked for, not looked up.
	for name, p := range listed(&skillsvcv1.ListSkillsRequest{}) {
		if p != nil {
			t.Errorf("ListSkills without include_provenance: %s has %v", name, p)
		}
	}
	for name := range want {
		g, err := sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: name})
		if err != nil {
			t.Fatal(err)
		}
		check("GetSkill", name, g.GetProvenance())
		res, err := sk.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: strings.ReplaceAll(name, "-", " "), IncludeProvenance: true})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range res.GetResults() {
			if h.GetSkill().GetName() == name {
				found = true
				check("SearchSkills", name, h.GetSkill().GetProvenance())
			}
		}
		if !found {
			t.Errorf("SearchSkills %q: no %s among %v", name, name, res.GetResults())
		}
	}

	// The JSON gateway's ListSkills.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.SkillsService/ListSkills", strings.NewReader(`{"includeProvenance":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = grpctest.CallerHeader("alice", "t1", "")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var jl skillsvcv1.ListSkillsResponse
	if err := protojson.Unmarshal(body, &jl); err != nil {
		t.Fatalf("JSON ListSkills: HTTP %d %s: %v", resp.StatusCode, body, err)
	}
	for _, s := range jl.GetSkills() {
		check("JSON ListSkills", s.GetName(), s.GetProvenance())
	}
	if len(jl.GetSkills()) != len(want) {
		t.Errorf("JSON ListSkills: %d skills, want %d", len(jl.GetSkills()), len(want))
	}

	// MCP skills/get and skills/list tell the same under _meta.
	m := newMCPRaw(t, p)
	h := grpctest.CallerHeader("alice", "t1", "")
	sid := m.open(h)
	type entry struct {
		Name string
		URI  string
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	metaOf := func(surface string, e entry) *skillsvcv1.Provenance {
		t.Helper()
		var v struct {
			Version, Publisher, Approver, ScanVerdict, Signature, SignatureKey string
			OutOfBand                                                          bool
		}
		if err := json.Unmarshal(e.Meta["io.skillsvc/provenance"], &v); err != nil {
			t.Errorf("%s %s: _meta %s: %v", surface, e.URI, e.Meta, err)
		}
		return &skillsvcv1.Provenance{Version: v.Version, Publisher: v.Publisher, Approver: v.Approver, ScanVerdict: v.ScanVerdict,
			Signature: v.Signature, SignatureKey: v.SignatureKey, OutOfBand: v.OutOfBand}
	}
	result := func(method, params string, into any) {
		t.Helper()
		_, msg := m.post(h, sid, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`)
		if msg == nil || msg.Error != nil {
			t.Fatalf("%s %s: %+v", method, params, msg)
		}
		if err := json.Unmarshal(msg.Result, into); err != nil {
			t.Fatal(err)
		}
	}
	var list struct{ Skills []entry }
	result("skills/list", `{}`, &list)
	seen := map[string]bool{}
	for _, e := range list.Skills {
		name := strings.TrimSuffix(strings.TrimPrefix(e.URI, "skill://"), "/SKILL.md")
		seen[name] = true
		check("MCP skills/list", name, metaOf("skills/list", e))
		var got struct{ Skill entry }
		result("skills/get", `{"uri":"`+e.URI+`"}`, &got)
		check("MCP skills/get", name, metaOf("skills/get", got.Skill))
	}
	for _, name := range []string{"notes", "release-notes", "changelog"} {
		if !seen[name] {
			t.Errorf("MCP skills/list: no %s among %v", name, list.Skills)
		}
	}

	// The search_skills tool, through the official SDK's client: the same
	// objects in its result's _meta, by each hit's skill URI.
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + p.httpAddr + "/mcp", HTTPClient: mcptest.Client(h)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for name := range want {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_skills", Arguments: map[string]any{"query": strings.ReplaceAll(name, "-", " ")}})
		if err != nil || res.IsError {
			t.Fatalf("search_skills %s: %v %+v", name, err, res)
		}
		raw, err := json.Marshal(res.Meta["io.skillsvc/provenance"])
		if err != nil {
			t.Fatal(err)
		}
		var byURI map[string]json.RawMessage
		if err := json.Unmarshal(raw, &byURI); err != nil {
			t.Fatalf("search_skills %s: _meta %v: %v", name, res.Meta, err)
		}
		uri := "skill://" + name + "/SKILL.md"
		if byURI[uri] == nil {
			t.Errorf("search_skills %s: no provenance for %s in %s", name, uri, raw)
			continue
		}
		check("MCP search_skills", name, metaOf("search_skills", entry{URI: uri, Meta: map[string]json.RawMessage{"io.skillsvc/provenance": byURI[uri]}}))
		if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "scanVerdict") || strings.Contains(text, "unsigned") {
			t.Errorf("search_skills %s: the model's text carries the provenance: %q", name, text)
		}
	}
}
