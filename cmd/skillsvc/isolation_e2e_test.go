package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file have one tenant reach for another's files
// through every RPC and spelling, against the binary in its production default.

// bucketState maps each key under prefixes to its ETag and size.
func bucketState(t *testing.T, srv *testserver.MinIO, bucket string, prefixes ...string) map[string]string {
	t.Helper()
	s3c := srv.Client(t)
	state := map[string]string{}
	for _, prefix := range prefixes {
		var token *string
		for {
			page, err := s3c.ListObjectsV2(t.Context(), &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix, ContinuationToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.Contents {
				state[*o.Key] = fmt.Sprintf("%s/%d", *o.ETag, *o.Size)
			}
			if page.NextContinuationToken == nil {
				break
			}
			token = page.NextContinuationToken
		}
	}
	return state
}

// Seeded contents. Each secret marker is in exactly one object the
// attacker (alice, thread t1, ticket K1) must never read; no request ever
// carries one, so finding one in an answer means it leaked.
const (
	bobThreadSecret  = "SECRET-BOB-THREAD-T2-q7Zx"
	bobThreadT1      = "SECRET-BOB-THREAD-T1-m3Kp"
	bobTicketSecret  = "SECRET-BOB-TICKET-K2-w9Lr"
	bobTicketK1      = "SECRET-BOB-TICKET-K1-c2Vn"
	bobSkillSecret   = "SECRET-BOB-SKILL-DESC-h5Td"
	bobSkillBody     = "SECRET-BOB-SKILL-BODY-j8Ys"
	bobSkillFile     = "SECRET-BOB-SKILL-FILE-b4Qe"
	aliceT2Secret    = "SECRET-ALICE-THREAD-T2-f6Gu"
	aliceK2Secret    = "SECRET-ALICE-TICKET-K2-n1Wo"
	aliceOwnThread   = "OWN-ALICE-THREAD-T1"
	aliceOwnTicket   = "OWN-ALICE-TICKET-K1"
	aliceOwnSkill    = "OWN-ALICE-SKILL-BODY"
	aliceOwnSkillRef = "OWN-ALICE-SKILL-FILE"
)

var isolationSecrets = []string{bobThreadSecret, bobThreadT1, bobTicketSecret, bobTicketK1, bobSkillSecret, bobSkillBody,
	bobSkillFile, aliceT2Secret, aliceK2Secret, blueSkillSecret, blueSkillBody, blueSkillFile}

func seedIsolation(put func(key, body string)) {
	put("bob/threads/t2/secret.md", "marker "+bobThreadSecret+"\n")
	put("bob/threads/t1/same.md", "marker "+bobThreadT1+"\n")
	put("bob/tickets/K2/x.md", "marker "+bobTicketSecret+"\n")
	put("bob/tickets/K1/bobk1.md", "marker "+bobTicketK1+"\n")
	put("bob/skills/cat/bobskill/SKILL.md", "---\nname: bobskill\ndescription: Zanzibar tasks for bob only, "+bobSkillSecret+".\n---\nmarker "+bobSkillBody+"\n")
	put("bob/skills/cat/bobskill/ref.md", "marker "+bobSkillFile+"\n")
	put("alice/threads/t2/other.md", "marker "+aliceT2Secret+"\n")
	put("alice/tickets/K2/y.md", "marker "+aliceK2Secret+"\n")
	put("alice/threads/t1/own.md", "marker "+aliceOwnThread+"\n")
	put("alice/tickets/K1/brief.md", "marker "+aliceOwnTicket+"\n")
	put("alice/skills/mine/aliceskill/SKILL.md", "---\nname: aliceskill\ndescription: Alice's own skill for her tasks.\n---\nmarker "+aliceOwnSkill+"\n")
	put("alice/skills/mine/aliceskill/notes.md", "marker "+aliceOwnSkillRef+"\n")
}

// rpcAnswer is everything one call sent back: its response messages as
// text (an exported archive unpacked) and its status.
type rpcAnswer struct {
	body string
	err  error
}

func protoText(msgs ...proto.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(prototext.Format(m))
	}
	return b.String()
}

// rpcCall reaches for a target (a path, a skill reference, a pattern) with
// one RPC. mutates says whether it may change what is stored.
type rpcCall struct {
	name    string
	mutates bool
	call    func(ctx context.Context, target string) rpcAnswer
}

// targetPair is a target that exists (hit) and the same place where
// nothing exists (miss): tmpl with %s replaced by each leaf.
type targetPair struct {
	tmpl      string
	hit, miss string
}

func (p targetPair) hitTarget() string  { return fmt.Sprintf(p.tmpl, p.hit) }
func (p targetPair) missTarget() string { return fmt.Sprintf(p.tmpl, p.miss) }

// isolationProbe runs attempts and checks what they return.
type isolationProbe struct {
	t *testing.T
}

// secretLeaks reports the secret markers in s.
func secretLeaks(s string) []string {
	var found []string
	for _, m := range isolationSecrets {
		if strings.Contains(s, m) {
			found = append(found, m)
		}
	}
	return found
}

func (ip isolationProbe) checkLeak(what string, a rpcAnswer) {
	ip.t.Helper()
	if l := secretLeaks(a.body); l != nil {
		ip.t.Errorf("%s returned another tenant's content %v:\n%s", what, l, a.body)
	}
	if l := secretLeaks(status.Convert(a.err).Message()); l != nil {
		ip.t.Errorf("%s error names another tenant's content %v: %v", what, l, a.err)
	}
}

// attempt runs c at both targets of p and asserts that neither leaks and
// that the answers are the same but for the caller's own spelling of the
// target: the caller cannot tell whether the hit target exists.
func (ip isolationProbe) attempt(ctx context.Context, label string, c rpcCall, p targetPair) {
	ip.t.Helper()
	hit := c.call(ctx, p.hitTarget())
	miss := c.call(ctx, p.missTarget())
	what := fmt.Sprintf("%s %s(%q)", label, c.name, p.hitTarget())
	ip.checkLeak(what, hit)
	ip.checkLeak(fmt.Sprintf("%s %s(%q)", label, c.name, p.missTarget()), miss)
	norm := func(s string) string { return strings.ReplaceAll(s, p.hit, p.miss) }
	hs, ms := status.Convert(hit.err), status.Convert(miss.err)
	if hs.Code() != ms.Code() || norm(hs.Message()) != ms.Message() {
		ip.t.Errorf("existence oracle: %s = %v %q, but aimed at %q = %v %q", what, hs.Code(), hs.Message(), p.missTarget(), ms.Code(), ms.Message())
		return
	}
	if !c.mutates && hs.Code() == codes.OK && norm(hit.body) != miss.body {
		ip.t.Errorf("existence oracle: %s answered\n%s\nbut aimed at %q\n%s", what, hit.body, p.missTarget(), miss.body)
	}
}

// isolationEnv is the clients of the binary alice attacks.
type isolationEnv struct {
	fsc skillsvcv1.FilesystemServiceClient
	sc  skillsvcv1.SkillsServiceClient
}

// TestIsolationEndToEnd gives alice (thread t1, ticket K1) a valid token
// and has her reach for bob's files, her own other thread and her other
// ticket through every FilesystemService and SkillsService RPC in every
// spelling we could think of: nothing of theirs comes back, every answer
// is the one a missing target gets, nothing of bob's is changed, and her
// own files still work with the same token.
func TestIsolationEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	seedIsolation(s3Put(t, srv, bucket))
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f)...)...)
	conn := dialWithinLimits(t, p.addr) // alice makes some 1,400 calls
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	sc := skillsvcv1.NewSkillsServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "K1")))
	// The token is alice's; the metadata names bob, thread t2, ticket K2.
	spoofed := grpctest.AsCaller(alice, "bob", "t2", "K2")
	spoofedT1 := grpctest.AsCaller(alice, "bob", "t1", "K1")
	e := isolationEnv{fsc: fsc, sc: sc}

	guarded := []string{"bob/", "alice/threads/t2/", "alice/tickets/K2/"}
	before := bucketState(t, srv, bucket, guarded...)
	if len(before) != 8 {
		t.Fatalf("seeded %d guarded objects, want 8: %v", len(before), before)
	}

	// Positive controls first: the same token reaches alice's own files,
	// ticket and skills, so every refusal below is about the target.
	if !t.Run("own files", func(t *testing.T) {
		e.ownControls(t, "alice", alice)
		e.ownControls(t, "alice with bob's metadata", spoofed)
	}) {
		t.FailNow()
	}
	t.Run("calls naming no target", func(t *testing.T) {
		e.untargeted(t, "alice", alice)
		e.untargeted(t, "alice with bob's metadata", spoofed)
		e.untargeted(t, "alice with bob's t1 metadata", spoofedT1)
	})

	// Read-only calls first, then writes and deletes: a spelling that is a
	// plain (odd) name in alice's own mounts is created and removed for the
	// hit and the miss alike, so both keep meeting the same state.
	t.Run("filesystem reads", func(t *testing.T) {
		ip := isolationProbe{t: t}
		for _, c := range e.readOnlyFSCalls() {
			for _, p := range fileTargets {
				ip.attempt(alice, "alice", c, p)
			}
			for _, p := range dirTargets {
				ip.attempt(alice, "alice", c, p)
			}
			for _, p := range spoofTargets {
				ip.attempt(spoofed, "alice+bob metadata", c, p)
			}
			for _, p := range spoofT1Targets {
				ip.attempt(spoofedT1, "alice+bob t1 metadata", c, p)
			}
		}
	})
	t.Run("patterns reaching upward", func(t *testing.T) {
		ip := isolationProbe{t: t}
		for _, root := range []string{"/", "/workspace", "/ticket", "/skills"} {
			for _, c := range e.globFrom(root) {
				for _, p := range globTargets {
					ip.attempt(alice, "alice", c, p)
				}
			}
		}
	})
	t.Run("skills", func(t *testing.T) {
		ip := isolationProbe{t: t}
		for _, c := range e.skillCalls() {
			for _, p := range skillRefs {
				ip.attempt(alice, "alice", c, p)
			}
			for _, p := range []targetPair{{"%s", "bobskill", "nothing"}, {"/skills/cat/%s", "bobskill", "nothing"}} {
				ip.attempt(spoofed, "alice+bob metadata", c, p)
			}
		}
		for _, c := range e.skillFileCalls() {
			for _, p := range skillFiles {
				ip.attempt(alice, "alice", c, p)
			}
		}
		for _, c := range e.categoryCalls() {
			for _, p := range skillCategories {
				ip.attempt(alice, "alice", c, p)
				ip.attempt(spoofed, "alice+bob metadata", c, p)
			}
		}
		for _, p := range skillQueries {
			ip.attempt(alice, "alice", e.searchCall(), p)
			ip.attempt(spoofed, "alice+bob metadata", e.searchCall(), p)
		}
	})

	// Then the calls that change things, one group of targets at a time,
	// each group's deletes last, so the next group starts from the same
	// state: none of its paths exists in alice's own mounts.
	t.Run("writes and deletes", func(t *testing.T) {
		ip := isolationProbe{t: t}
		for _, g := range []struct {
			label   string
			ctx     context.Context
			targets []targetPair
		}{
			{"alice", alice, fileTargets},
			{"alice+bob metadata", spoofed, spoofTargets},
			{"alice+bob t1 metadata", spoofedT1, spoofT1Targets},
		} {
			for _, c := range append(e.writingFSCalls(), e.deleteCall()) {
				for _, p := range g.targets {
					ip.attempt(g.ctx, g.label, c, p)
				}
			}
		}
		for _, p := range dirTargets {
			ip.attempt(alice, "alice", e.deleteAllCall(), p)
		}
	})
	t.Run("after all of it", func(t *testing.T) {
		if after := bucketState(t, srv, bucket, guarded...); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("objects of bob, thread t2 or ticket K2 changed:\nbefore %v\nafter  %v", before, after)
		}
		// The token still works for alice's own files after all of it.
		e.ownControls(t, "alice, at the end", alice)
		if procExited(p) {
			t.Fatalf("skillsvc exited:\n%s", p.output())
		}
	})
}

// ownControls reads alice's own files, ticket and skills with ctx.
func (e isolationEnv) ownControls(t *testing.T, label string, ctx context.Context) {
	t.Helper()
	fsc, sc := e.fsc, e.sc
	if rd, err := fsc.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/own.md"}); err != nil || !strings.Contains(rd.GetContent(), aliceOwnThread) {
		t.Fatalf("%s: Read own workspace = %v, %v", label, rd, err)
	}
	if rd, err := fsc.Read(ctx, &skillsvcv1.ReadRequest{Path: "/ticket/brief.md"}); err != nil || !strings.Contains(rd.GetContent(), aliceOwnTicket) {
		t.Fatalf("%s: Read own ticket = %v, %v", label, rd, err)
	}
	if g, err := sc.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: "aliceskill"}); err != nil || !strings.Contains(g.GetBody(), aliceOwnSkill) {
		t.Fatalf("%s: GetSkill own = %v, %v", label, g, err)
	}
	if rf, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "/skills/mine/aliceskill", File: "notes.md"}); err != nil || !strings.Contains(rf.GetContent(), aliceOwnSkillRef) {
		t.Fatalf("%s: ReadSkillFile own = %v, %v", label, rf, err)
	}
	if rd, err := fsc.Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/mine/aliceskill/notes.md"}); err != nil || !strings.Contains(rd.GetContent(), aliceOwnSkillRef) {
		t.Fatalf("%s: Read own skill file = %v, %v", label, rd, err)
	}
	names, err := skillNames(ctx, sc)
	if err != nil || names != "aliceskill" {
		t.Fatalf("%s: ListSkills = %q, %v; want only aliceskill", label, names, err)
	}
}

// untargeted makes the calls that name no target: they see only alice's
// own things.
func (e isolationEnv) untargeted(t *testing.T, label string, ctx context.Context) {
	t.Helper()
	fsc, sc := e.fsc, e.sc
	ip := isolationProbe{t: t}
	ownPaths := map[string]bool{
		"/workspace/own.md": true, "/ticket/brief.md": true,
		"/skills/mine/aliceskill/SKILL.md": true, "/skills/mine/aliceskill/notes.md": true,
	}
	gr, err := fsc.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/", Pattern: "marker"})
	ip.checkLeak(label+" Grep /", rpcAnswer{protoText(gr), err})
	var got []string
	for _, m := range gr.GetMatches() {
		got = append(got, m.GetPath())
	}
	// Every seeded file says "marker"; four of them are alice's.
	if err != nil || len(got) != len(ownPaths) {
		t.Errorf("%s: Grep / marker = %v, %v; want alice's %d files", label, got, err, len(ownPaths))
	}
	for _, g := range got {
		if !ownPaths[g] {
			t.Errorf("%s: Grep / matched %q, not one of alice's files", label, g)
		}
	}
	for _, pattern := range []string{"**", "**/*.md", "*/*", "{..,x}/**", "[.][.]/**"} {
		gl, err := fsc.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/", Pattern: pattern})
		ip.checkLeak(label+" Glob "+pattern, rpcAnswer{protoText(gl), err})
		for _, m := range gl.GetMatches() {
			if !ownPaths[m.GetPath()] {
				t.Errorf("%s: Glob(/, %q) matched %q, not one of alice's files", label, pattern, m.GetPath())
			}
		}
	}
	ls, err := fsc.List(ctx, &skillsvcv1.ListRequest{Path: "/"})
	var roots []string
	for _, entry := range ls.GetEntries() {
		roots = append(roots, entry.GetPath())
	}
	if err != nil || strings.Join(roots, ",") != "/skills,/ticket,/workspace" {
		t.Errorf("%s: List / = %v, %v", label, roots, err)
	}
	cats, err := sc.ListCategories(ctx, &skillsvcv1.ListCategoriesRequest{})
	ip.checkLeak(label+" ListCategories", rpcAnswer{protoText(cats), err})
	var catNames []string
	for _, c := range cats.GetCategories() {
		catNames = append(catNames, c.GetName())
	}
	if err != nil || strings.Join(catNames, ",") != "mine" {
		t.Errorf("%s: ListCategories = %v, %v; want only alice's", label, catNames, err)
	}
	list, err := sc.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true, IncludeDisabled: true, PageSize: 1000})
	ip.checkLeak(label+" ListSkills", rpcAnswer{protoText(list), err})
	block, err := sc.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{})
	ip.checkLeak(label+" FormatSkills", rpcAnswer{protoText(block), err})
	if err != nil || strings.Contains(block.GetText(), "bobskill") || !strings.Contains(block.GetText(), "aliceskill") {
		t.Errorf("%s: FormatSkills = %q, %v", label, block.GetText(), err)
	}
	found, err := sc.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "zanzibar tasks for bob bobskill"})
	ip.checkLeak(label+" SearchSkills", rpcAnswer{protoText(found), err})
	for _, r := range found.GetResults() {
		if r.GetSkill().GetName() != "aliceskill" {
			t.Errorf("%s: SearchSkills found %v", label, r.GetSkill())
		}
	}
}

// readOnlyFSCalls are every FilesystemService RPC that reads, aimed at a path.
func (e isolationEnv) readOnlyFSCalls() []rpcCall {
	fsc := e.fsc
	return []rpcCall{
		{name: "List", call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.List(ctx, &skillsvcv1.ListRequest{Path: target})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Stat", call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.Stat(ctx, &skillsvcv1.StatRequest{Path: target})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Read", call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.Read(ctx, &skillsvcv1.ReadRequest{Path: target})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Download", call: func(ctx context.Context, target string) rpcAnswer {
			stream, err := fsc.Download(ctx, &skillsvcv1.DownloadRequest{Path: target})
			if err != nil {
				return rpcAnswer{err: err}
			}
			var body strings.Builder
			for {
				msg, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					return rpcAnswer{body: body.String()}
				}
				if err != nil {
					return rpcAnswer{body.String(), err}
				}
				body.WriteString(protoText(msg))
			}
		}},
		{name: "Glob", call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.Glob(ctx, &skillsvcv1.GlobRequest{Path: target, Pattern: "**"})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Grep", call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.Grep(ctx, &skillsvcv1.GrepRequest{Path: target, Pattern: "marker"})
			return rpcAnswer{protoText(r), err}
		}},
	}
}

// writingFSCalls are the FilesystemService RPCs that write, aimed at a path.
func (e isolationEnv) writingFSCalls() []rpcCall {
	fsc := e.fsc
	return []rpcCall{
		// First, while the hit target exists only for bob (if at all).
		{name: "Edit", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.Edit(ctx, &skillsvcv1.EditRequest{Path: target, OldString: "marker", NewString: "edited by alice"})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Write", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
			r, err := fsc.Write(ctx, &skillsvcv1.WriteRequest{Path: target, Content: "overwritten by alice\n"})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Upload", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
			up, err := fsc.Upload(ctx)
			if err != nil {
				return rpcAnswer{err: err}
			}
			// A refused header ends the stream; CloseAndRecv has the status.
			_ = up.Send(&skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Header{Header: &skillsvcv1.UploadHeader{Path: target}}})
			_ = up.Send(&skillsvcv1.UploadRequest{Msg: &skillsvcv1.UploadRequest_Data{Data: []byte("uploaded by alice\n")}})
			r, err := up.CloseAndRecv()
			return rpcAnswer{protoText(r), err}
		}},
	}
}

func (e isolationEnv) deleteCall() rpcCall {
	fsc := e.fsc
	return rpcCall{name: "Delete", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
		r, err := fsc.Delete(ctx, &skillsvcv1.DeleteRequest{Path: target})
		return rpcAnswer{protoText(r), err}
	}}
}

func (e isolationEnv) deleteAllCall() rpcCall {
	fsc := e.fsc
	return rpcCall{name: "Delete(recursive)", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
		r, err := fsc.Delete(ctx, &skillsvcv1.DeleteRequest{Path: target, Recursive: true})
		return rpcAnswer{protoText(r), err}
	}}
}

// globFrom are the calls that take a pattern, from root.
func (e isolationEnv) globFrom(root string) []rpcCall {
	fsc := e.fsc
	return []rpcCall{
		{name: "Glob(" + root + ")", call: func(ctx context.Context, pattern string) rpcAnswer {
			r, err := fsc.Glob(ctx, &skillsvcv1.GlobRequest{Path: root, Pattern: pattern})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "Grep(" + root + ", glob)", call: func(ctx context.Context, pattern string) rpcAnswer {
			r, err := fsc.Grep(ctx, &skillsvcv1.GrepRequest{Path: root, Pattern: "marker", Glob: pattern})
			return rpcAnswer{protoText(r), err}
		}},
	}
}

// skillCalls are every SkillsService RPC, aimed at a skill reference.
func (e isolationEnv) skillCalls() []rpcCall {
	sc := e.sc
	return []rpcCall{
		{name: "GetSkill", call: func(ctx context.Context, ref string) rpcAnswer {
			r, err := sc.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: ref})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "RenderSkill", call: func(ctx context.Context, ref string) rpcAnswer {
			r, err := sc.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: ref, Arguments: "x"})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "ReadSkillFile(SKILL.md)", call: func(ctx context.Context, ref string) rpcAnswer {
			r, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: ref, File: "SKILL.md"})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "ReadSkillFile(ref.md)", call: func(ctx context.Context, ref string) rpcAnswer {
			r, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: ref, File: "ref.md"})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "ExportSkill", call: func(ctx context.Context, ref string) rpcAnswer {
			stream, err := sc.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: ref})
			if err != nil {
				return rpcAnswer{err: err}
			}
			var data []byte
			for {
				msg, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					return rpcAnswer{body: exportText(data)}
				}
				if err != nil {
					return rpcAnswer{exportText(data), err}
				}
				data = append(data, msg.GetData()...)
			}
		}},
		{name: "SetSkillEnabled(false)", mutates: true, call: func(ctx context.Context, ref string) rpcAnswer {
			r, err := sc.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: ref, Enabled: false})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "SetSkillEnabled(true)", mutates: true, call: func(ctx context.Context, ref string) rpcAnswer {
			r, err := sc.SetSkillEnabled(ctx, &skillsvcv1.SetSkillEnabledRequest{Path: ref, Enabled: true})
			return rpcAnswer{protoText(r), err}
		}},
	}
}

// skillFileCalls read a file of alice's skill, reaching out of its folder.
func (e isolationEnv) skillFileCalls() []rpcCall {
	sc := e.sc
	return []rpcCall{
		{name: "ReadSkillFile(aliceskill, file)", call: func(ctx context.Context, file string) rpcAnswer {
			r, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "aliceskill", File: file})
			return rpcAnswer{protoText(r), err}
		}},
	}
}

// categoryCalls are the calls that take a category.
func (e isolationEnv) categoryCalls() []rpcCall {
	sc := e.sc
	return []rpcCall{
		{name: "ListSkills(category)", call: func(ctx context.Context, cat string) rpcAnswer {
			r, err := sc.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{Category: &cat, IncludeInvalid: true, IncludeDisabled: true})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "FormatSkills(category)", call: func(ctx context.Context, cat string) rpcAnswer {
			r, err := sc.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Category: &cat})
			return rpcAnswer{protoText(r), err}
		}},
		{name: "SearchSkills(category)", call: func(ctx context.Context, cat string) rpcAnswer {
			r, err := sc.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: "zanzibar tasks", Category: &cat})
			return rpcAnswer{protoText(r), err}
		}},
	}
}

func (e isolationEnv) searchCall() rpcCall {
	sc := e.sc
	return rpcCall{name: "SearchSkills(query)", call: func(ctx context.Context, q string) rpcAnswer {
		r, err := sc.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: q})
		return rpcAnswer{protoText(r), err}
	}}
}

// Files of bob, of alice's thread t2 and of her ticket K2, each spelled
// every way a caller could; the miss leaf names nothing.
var fileTargets = []targetPair{
	{"/workspace/../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/../../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/./../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace//../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/../../bob/threads/t2/%s/", "secret.md", "nope.md"},
	{"/workspace/..%%2f..%%2fbob%%2fthreads%%2ft2%%2f%s", "secret.md", "nope.md"},
	{"/workspace/..%%2f..%%2f..%%2fbob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/%%2e%%2e/%%2e%%2e/bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/%%252e%%252e/%%252e%%252e/bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/\uff0e\uff0e/\uff0e\uff0e/bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace\\..\\..\\bob\\threads\\t2\\%s", "secret.md", "nope.md"},
	{"/workspace/../../bob/threads/t2/%s\x00", "secret.md", "nope.md"},
	{"/workspace/\x00/../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/bob/threads/t2/%s", "secret.md", "nope.md"},
	{"//bob/threads/t2/%s", "secret.md", "nope.md"},
	{"bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/_shared/../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/skills/../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/workspace/../../bob/threads/t1/%s", "same.md", "nope.md"},
	{"/workspace/../../bob/tickets/K2/%s", "x.md", "nope.md"},
	{"/ticket/../../../bob/tickets/K2/%s", "x.md", "nope.md"},
	{"/ticket/../../../bob/tickets/K1/%s", "bobk1.md", "nope.md"},
	{"/ticket/%s", "bobk1.md", "nope-k1.md"}, // bob's ticket of alice's ticket's name
	{"/ticket/../K2/%s", "y.md", "nope.md"},
	{"/ticket/..%%2fK2%%2f%s", "y.md", "nope.md"},
	{"/workspace/../../alice/tickets/K2/%s", "y.md", "nope.md"},
	{"/workspace/../t2/%s", "other.md", "nope.md"},
	{"/workspace/../../alice/threads/t2/%s", "other.md", "nope.md"},
	{"/skills/../threads/t2/%s", "other.md", "nope.md"},
	{"/workspace/%s", "same.md", "nope-t1.md"}, // bob's thread of alice's thread's name
	{"/skills/../../bob/skills/cat/bobskill/%s", "SKILL.md", "NOPE.md"},
	{"/skills/cat/bobskill/%s", "SKILL.md", "NOPE.md"},
	{"/skills/cat/%s/SKILL.md", "bobskill", "nothing"},
}

// Their directories, for the calls that take one.
var dirTargets = []targetPair{
	{"/workspace/../../bob/threads/%s", "t2", "t9"},
	{"/workspace/../../%s", "bob", "nobody"},
	{"/workspace/..%%2f..%%2f%s", "bob", "nobody"},
	{"/../%s", "bob", "nobody"},
	{"/%s", "bob", "nobody"},
	{"/%s/threads/t2", "bob", "nobody"},
	{"/workspace/../%s", "t2", "t9"},
	{"/ticket/../%s", "K2", "K9"},
	{"/ticket/../../../bob/tickets/%s", "K2", "K9"},
	{"/skills/../../%s/skills", "bob", "nobody"},
	{"/skills/%s", "cat", "nothing"},
	{"/skills/cat/%s", "bobskill", "nothing"},
}

// Patterns reaching upward from inside alice's mounts.
var globTargets = []targetPair{
	{"../../bob/threads/%s/*", "t2", "t9"},
	{"../../%s/**", "bob", "nobody"},
	{"{..,x}/{..,y}/bob/threads/%s/*", "t2", "t9"},
	{"[.][.]/[.][.]/bob/threads/%s/*", "t2", "t9"},
	{"../%s/*", "t2", "t9"},
	{"**/../../bob/threads/%s/*", "t2", "t9"},
	{"{../../bob/threads/%s/*,*}", "t2", "t9"},
}

// The metadata names bob, t2 and K2 (or bob, t1, K1); alice's token
// decides, so these are alice's own missing files.
var spoofTargets = []targetPair{
	{"/workspace/%s", "secret.md", "nope-t2.md"},
	{"/workspace/%s", "other.md", "nope-other.md"},
	{"/ticket/%s", "x.md", "nope-k2.md"},
	{"/ticket/%s", "y.md", "nope-y.md"},
}
var spoofT1Targets = []targetPair{
	{"/workspace/%s", "same.md", "nope-t1.md"},
	{"/ticket/%s", "bobk1.md", "nope-k1.md"},
}

var skillRefs = []targetPair{
	{"../bob/skills/cat/%s", "bobskill", "nothing"},
	{"../../bob/skills/cat/%s", "bobskill", "nothing"},
	{"/skills/../../bob/skills/cat/%s", "bobskill", "nothing"},
	{"/skills/../../bob/skills/cat/%s/SKILL.md", "bobskill", "nothing"},
	{"/skills/..%%2f..%%2fbob/skills/cat/%s", "bobskill", "nothing"},
	{"..%%2fbob%%2fskills%%2fcat%%2f%s", "bobskill", "nothing"},
	{"/bob/skills/cat/%s", "bobskill", "nothing"},
	{"bob/skills/cat/%s", "bobskill", "nothing"},
	{"/skills/cat/%s", "bobskill", "nothing"},
	{"/skills/cat/%s/SKILL.md", "bobskill", "nothing"},
	{"cat/%s", "bobskill", "nothing"},
	{"%s", "bobskill", "nothing"},
	{"mine/../../../bob/skills/cat/%s", "bobskill", "nothing"},
	{"/skills/../threads/t2/%s", "other.md", "nope.md"},
}

var skillFiles = []targetPair{
	{"../../../bob/skills/cat/bobskill/%s", "SKILL.md", "NOPE.md"},
	{"../../../bob/skills/cat/%s/ref.md", "bobskill", "nothing"},
	{"../../../bob/threads/t2/%s", "secret.md", "nope.md"},
	{"/bob/skills/cat/bobskill/%s", "ref.md", "nope.md"},
	{"..%%2f..%%2f..%%2fbob/skills/cat/bobskill/%s", "ref.md", "nope.md"},
	{"./../../cat/bobskill/%s", "ref.md", "nope.md"},
}

var skillCategories = []targetPair{
	{"%s", "cat", "nothing"},
	{"../bob/skills/%s", "cat", "nothing"},
	{"/bob/skills/%s", "cat", "nothing"},
}

var skillQueries = []targetPair{
	{"%s", "zanzibar", "qwertyuiop"},
	{"%s", "bobskill", "nothing"},
	{"cat/%s", "bobskill", "nothing"},
}

// exportText is an exported archive unpacked: each name, then its content.
func exportText(data []byte) string {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return string(data)
	}
	var b strings.Builder
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return b.String()
		}
		b.WriteString(h.Name + "\n")
		io.Copy(&b, tr)
	}
}
