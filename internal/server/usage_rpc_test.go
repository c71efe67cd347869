package server_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/tracing/tracingtest"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// recorded is a usage.Recorder keeping every event, for the tests to
// count.
type recorded struct {
	mu     sync.Mutex
	events []usage.Event
}

func (r *recorded) Record(_ context.Context, e usage.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// take returns the events recorded since the last take.
func (r *recorded) take() []usage.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// usageLibrary holds a skill in each layer alice sees: her own, her team
// eng's and the organization's, each with another file.
func usageLibrary() *skillstest.Builder {
	b := skillstest.New()
	b.User("alice").Skill("mine", "mine", "Alice's notes on invoices.", "Read ref.md.").File("mine/ref.md", "ref\n")
	b.Team("eng").Skill("deploy", "deploy", "Deploy the service to production.", "Run it.").File("deploy/scripts/run.sh", "#!/bin/sh\necho run\n")
	b.Shared().Skill("docs/pdf", "pdf", "Extract text and tables from PDF files.", "Use scripts/x.py.").File("docs/pdf/scripts/x.py", "print(1)\n")
	return b
}

// TestUsageRecordedOncePerCall: every call that serves a skill, through
// gRPC and through the JSON gateway's in-process channel, records one
// event naming the skill's name, layer and version (its manifest digest,
// or a published version's id), the caller and the surface; a reply kept
// encoded (replies) is counted as a built one; listings record nothing.
func TestUsageRecordedOncePerCall(t *testing.T) {
	for _, surface := range []string{skilluse.GRPC, skilluse.JSON} {
		t.Run(surface, func(t *testing.T) {
			rec := &recorded{}
			c := start(t, usageLibrary().Bucket(t), options{usage: rec, inProcess: surface == skilluse.JSON})
			ctx := grpctest.InTeams(grpctest.AsCaller(t.Context(), "alice", "t1", ""), "eng")
			list, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			digest := map[string]string{}
			for _, s := range list.GetSkills() {
				digest[s.GetName()] = s.GetManifestDigest()
			}
			if len(digest) != 3 || slices.Contains(slices.Collect(mapValues(digest)), "") {
				t.Fatalf("listing: %v", digest)
			}
			if e := rec.take(); len(e) != 0 {
				t.Fatalf("a listing recorded %+v", e)
			}
			want := func(t *testing.T, kind usage.Kind, skill, layer, file string) {
				t.Helper()
				got := rec.take()
				if len(got) != 1 {
					t.Fatalf("%d events, want 1: %+v", len(got), got)
				}
				e := got[0]
				w := usage.Event{Kind: kind, Skill: skill, Layer: layer, Version: digest[skill], File: file,
					User: "alice", Teams: []string{"eng"}, Thread: "t1", Surface: surface}
				if e.Kind != w.Kind || e.Skill != w.Skill || e.Layer != w.Layer || e.Version != w.Version || e.File != w.File ||
					e.User != w.User || !slices.Equal(e.Teams, w.Teams) || e.Thread != w.Thread || e.Surface != w.Surface {
					t.Fatalf("event\n got %+v\nwant %+v", e, w)
				}
			}
			for _, tc := range []struct{ skill, path, layer, file string }{
				{"mine", "mine", "user", "ref.md"},
				{"deploy", "/skills/deploy", "team:eng", "scripts/run.sh"},
				{"pdf", "/skills/docs/pdf", "shared", "scripts/x.py"},
			} {
				t.Run(tc.skill, func(t *testing.T) {
					// Three asks: the user's own reply is kept from its
					// second, any other at once, and each is a use.
					for range 3 {
						if _, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: tc.path}); err != nil {
							t.Fatal(err)
						}
						want(t, usage.Activation, tc.skill, tc.layer, "")
					}
					if _, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: tc.path}); err != nil {
						t.Fatal(err)
					}
					want(t, usage.Activation, tc.skill, tc.layer, "")
					if _, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: tc.path, File: tc.file}); err != nil {
						t.Fatal(err)
					}
					want(t, usage.FileRead, tc.skill, tc.layer, tc.file)
					if _, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: tc.path, File: "SKILL.md"}); err != nil {
						t.Fatal(err)
					}
					want(t, usage.Activation, tc.skill, tc.layer, "")
					if _, err := export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: tc.path}); err != nil {
						t.Fatal(err)
					}
					want(t, usage.FileRead, tc.skill, tc.layer, skilluse.Exported)
				})
			}
			t.Run("failures", func(t *testing.T) {
				_, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "nope"})
				grpctest.WantCode(t, err, 5) // NotFound
				_, err = c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "nope.txt"})
				grpctest.WantCode(t, err, 5)
				if e := rec.take(); len(e) != 0 {
					t.Fatalf("failed calls recorded %+v", e)
				}
			})
			t.Run("searches", func(t *testing.T) {
				for i := range 2 { // the second answered by the kept reply
					res, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "extract tables from a pdf"})
					if err != nil || len(res.GetResults()) == 0 {
						t.Fatalf("search %d: %v, %v", i, res, err)
					}
					var names []string
					for _, r := range res.GetResults() {
						names = append(names, r.GetSkill().GetName())
					}
					got := rec.take()
					if len(got) != 1 || got[0].Kind != usage.Search || got[0].Query != "extract tables from a pdf" ||
						!slices.Equal(got[0].Results, names) || got[0].Surface != surface || got[0].User != "alice" || got[0].Skill != "" {
						t.Fatalf("search %d recorded %+v, want results %v", i, got, names)
					}
				}
				res, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "zebra husbandry"})
				if got := rec.take(); err != nil || len(got) != 1 || len(got[0].Results) != len(res.GetResults()) {
					t.Fatalf("a search finding %d recorded %+v (%v)", len(res.GetResults()), got, err)
				}
				for i := range 2 { // a prompt block with a task is a search; the second is kept
					b, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Query: "deploy the service"})
					got := rec.take()
					if err != nil || len(got) != 1 || got[0].Kind != usage.Search || got[0].Query != "deploy the service" ||
						len(got[0].Results) != int(b.GetIncluded()) || !slices.Contains(got[0].Results, "deploy") {
						t.Fatalf("block %d (%d included) recorded %+v (%v)", i, b.GetIncluded(), got, err)
					}
				}
				if _, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{}); err != nil {
					t.Fatal(err)
				}
				if got := rec.take(); len(got) != 0 {
					t.Fatalf("a block without a task recorded %+v", got)
				}
			})
			t.Run("filesystem", func(t *testing.T) {
				read := func(path string, offset int64) {
					t.Helper()
					if _, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: path, Offset: offset}); err != nil {
						t.Fatal(err)
					}
				}
				wantVFS := func(kind usage.Kind, file string) {
					t.Helper()
					got := rec.take()
					if len(got) != 1 || got[0].Kind != kind || got[0].Skill != "pdf" || got[0].Layer != "shared" ||
						got[0].Version != digest["pdf"] || got[0].File != file || got[0].Surface != skilluse.VFS || got[0].Thread != "t1" {
						t.Fatalf("recorded %+v, want one %s of %q through vfs", got, kind, file)
					}
				}
				read("/skills/docs/pdf/SKILL.md", 0)
				wantVFS(usage.Activation, "")
				read("/skills/docs/pdf/scripts/x.py", 0)
				wantVFS(usage.FileRead, "scripts/x.py")
				read("/skills/docs/pdf/SKILL.md", 1) // the same read, continued
				if _, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/docs"}); err == nil {
					t.Fatal("read a directory")
				}
				if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "a\n"}); err != nil {
					t.Fatal(err)
				}
				read("/workspace/a.md", 0)
				if got := rec.take(); len(got) != 0 {
					t.Fatalf("recorded %+v", got)
				}
			})
		})
	}
}

func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestUsagePinnedVersion: a read pinned to a published version names the
// version's id, whatever the live copy's digest.
func TestUsagePinnedVersion(t *testing.T) {
	rec := &recorded{}
	c := start(t, usageLibrary().Bucket(t), options{usage: rec})
	ctx := asAlice(t)
	res, err := publish(ctx, c.library, pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf"}), pubChunk("SKILL.md", pdfMD), pubChunk("notes.md", "v1\n"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetVersion().GetId()
	if _, err := publish(ctx, c.library, pubHeader(&skillsvcv1.PublishSkillHeader{Name: "pdf"}), pubChunk("SKILL.md", pdfMD), pubChunk("notes.md", "v2\n")); err != nil {
		t.Fatal(err)
	}
	rec.take()
	check := func(kind usage.Kind, file string) {
		t.Helper()
		got := rec.take()
		if len(got) != 1 || got[0].Kind != kind || got[0].Skill != "pdf" || got[0].Layer != "user" || got[0].Version != id || got[0].File != file {
			t.Fatalf("recorded %+v, want one %s of pdf at %s", got, kind, id)
		}
	}
	if _, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf", Version: id}); err != nil {
		t.Fatal(err)
	}
	check(usage.Activation, "")
	if _, err := c.skills.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: "pdf", Version: id}); err != nil {
		t.Fatal(err)
	}
	check(usage.Activation, "")
	if _, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", Version: id[:len("sha256:")+12], File: "notes"}); err != nil {
		t.Fatal(err)
	}
	check(usage.FileRead, "notes.md")
	if _, err := export(ctx, c.skills, &skillsvcv1.ExportSkillRequest{Path: "pdf", Version: id}); err != nil {
		t.Fatal(err)
	}
	check(usage.FileRead, skilluse.Exported)
}

// TestUsageSpans: the server span of a call serving a skill carries its
// name, version and layer and an activation event; a listing's, a prompt
// block's and a search's carry the skills offered.
func TestUsageSpans(t *testing.T) {
	spans := tracingtest.NewRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	c := start(t, usageLibrary().Bucket(t), options{tracer: tp})
	ctx := grpctest.InTeams(asAlice(t), "eng")
	got, err := c.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	digest := got.GetSkill().GetManifestDigest()
	for _, call := range []func() error{
		func() error { _, err := c.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{}); return err },
		func() error { _, err := c.skills.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{}); return err },
		func() error {
			_, err := c.skills.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "pdf tables"})
			return err
		},
		func() error {
			_, err := c.skills.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "pdf", File: "scripts/x.py"})
			return err
		},
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	// A server span ends after its answer is sent: wait for each.
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, method := range []string{"GetSkill", "ListSkills", "FormatSkills", "SearchSkills", "ReadSkillFile"} {
		name := "skillsvc.v1.SkillsService/" + method
		byName[name] = spans.WaitForName(t, name)
	}
	attrs := func(method string) map[attribute.Key]attribute.Value {
		t.Helper()
		m := map[attribute.Key]attribute.Value{}
		for _, a := range byName["skillsvc.v1.SkillsService/"+method].Attributes() {
			m[a.Key] = a.Value
		}
		return m
	}
	get := attrs("GetSkill")
	if get[skilluse.AttrSkillName].AsString() != "pdf" || get[skilluse.AttrSkillVersion].AsString() != digest ||
		get[skilluse.AttrSkillLayer].AsString() != "shared" || get[skilluse.AttrSurface].AsString() != "grpc" {
		t.Fatalf("GetSkill's span: %v", get)
	}
	events := byName["skillsvc.v1.SkillsService/GetSkill"].Events()
	if len(events) == 0 || !slices.ContainsFunc(events, func(e sdktrace.Event) bool { return e.Name == skilluse.EventActivated }) {
		t.Fatalf("GetSkill's span events: %+v", events)
	}
	if read := attrs("ReadSkillFile"); read[skilluse.AttrSkillFile].AsString() != "scripts/x.py" || read[skilluse.AttrSkillName].AsString() != "pdf" {
		t.Fatalf("ReadSkillFile's span: %v", read)
	}
	for _, method := range []string{"ListSkills", "FormatSkills", "SearchSkills"} {
		a := attrs(method)
		offered := a[skilluse.AttrOffered].AsStringSlice()
		if !slices.Contains(offered, "pdf@"+digest) || a[skilluse.AttrOfferedCount].AsInt64() != int64(len(offered)) {
			t.Fatalf("%s's span offered %v (%v)", method, offered, a[skilluse.AttrOfferedCount])
		}
		if method != "SearchSkills" && len(offered) != 3 {
			t.Fatalf("%s's span offered %v, want the 3 skills", method, offered)
		}
	}
}
