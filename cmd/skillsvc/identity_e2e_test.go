package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/certs/certstest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file attack the binary's identity boundary from the
// outside: one tenant reaching for another's files, forged and hostile
// tokens, key and certificate rotation, insecure mode on a public address,
// and the audit trail of it all.

// jwtFixture is an HS256 secret file and what signs tokens for it.
type jwtFixture struct {
	file   string
	secret []byte
}

func newJWTFixture(t *testing.T) jwtFixture {
	t.Helper()
	secret := []byte("identity-e2e-" + rand.Text() + rand.Text())
	file := filepath.Join(t.TempDir(), "jwt-secret")
	writeFileAtomic(t, file, append(slices.Clone(secret), '\n'))
	return jwtFixture{file: file, secret: secret}
}

// writeFileAtomic replaces path by a rename, as a secret rotation does.
func writeFileAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// agentClaims are valid claims for user/thread (and ticket, when not
// empty), good for an hour.
func agentClaims(user, thread, ticket string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"user":   user,
		"thread": thread,
		"sub":    "agent-" + user,
		"iat":    now.Unix(),
		"exp":    now.Add(time.Hour).Unix(),
	}
	if ticket != "" {
		c["ticket"] = ticket
	}
	return c
}

func signToken(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func withBearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// hsJWTFlags are the flags of a binary that verifies tokens with f's secret.
func hsJWTFlags(f jwtFixture, extra ...string) []string {
	return append([]string{"--auth.mode=jwt", "--auth.jwt.secret-file=" + f.file}, extra...)
}

// procExited reports whether p has exited, leaving the exit status for others.
func procExited(p *proc) bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

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
	bobSkillFile, aliceT2Secret, aliceK2Secret}

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
	alice := withBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "K1")))
	// The token is alice's; the metadata names bob, thread t2, ticket K2.
	spoofed := as(alice, "bob", "t2", "K2")
	spoofedT1 := as(alice, "bob", "t1", "K1")

	guarded := []string{"bob/", "alice/threads/t2/", "alice/tickets/K2/"}
	before := bucketState(t, srv, bucket, guarded...)
	if len(before) != 8 {
		t.Fatalf("seeded %d guarded objects, want 8: %v", len(before), before)
	}

	// Positive controls first: the same token reaches alice's own files,
	// ticket and skills, so every refusal below is about the target.
	ownControls := func(label string, ctx context.Context) {
		t.Helper()
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
	ownControls("alice", alice)
	ownControls("alice with bob's metadata", spoofed)

	ip := isolationProbe{t: t}
	// Calls that name no target see only alice's own things.
	ownPaths := map[string]bool{
		"/workspace/own.md": true, "/ticket/brief.md": true,
		"/skills/mine/aliceskill/SKILL.md": true, "/skills/mine/aliceskill/notes.md": true,
	}
	untargeted := func(label string, ctx context.Context) {
		t.Helper()
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
		for _, e := range ls.GetEntries() {
			roots = append(roots, e.GetPath())
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
	untargeted("alice", alice)
	untargeted("alice with bob's metadata", spoofed)
	untargeted("alice with bob's t1 metadata", spoofedT1)

	// Every FilesystemService RPC, aimed at a path.
	readOnlyFS := []rpcCall{
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
	writingFS := []rpcCall{
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
	deleteFS := rpcCall{name: "Delete", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
		r, err := fsc.Delete(ctx, &skillsvcv1.DeleteRequest{Path: target})
		return rpcAnswer{protoText(r), err}
	}}
	deleteAllFS := rpcCall{name: "Delete(recursive)", mutates: true, call: func(ctx context.Context, target string) rpcAnswer {
		r, err := fsc.Delete(ctx, &skillsvcv1.DeleteRequest{Path: target, Recursive: true})
		return rpcAnswer{protoText(r), err}
	}}

	// Files of bob, of alice's thread t2 and of her ticket K2, each spelled
	// every way a caller could; the miss leaf names nothing.
	fileTargets := []targetPair{
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
	dirTargets := []targetPair{
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
	globTargets := []targetPair{
		{"../../bob/threads/%s/*", "t2", "t9"},
		{"../../%s/**", "bob", "nobody"},
		{"{..,x}/{..,y}/bob/threads/%s/*", "t2", "t9"},
		{"[.][.]/[.][.]/bob/threads/%s/*", "t2", "t9"},
		{"../%s/*", "t2", "t9"},
		{"**/../../bob/threads/%s/*", "t2", "t9"},
		{"{../../bob/threads/%s/*,*}", "t2", "t9"},
	}
	globFrom := func(root string) []rpcCall {
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
	// The metadata names bob, t2 and K2 (or bob, t1, K1); alice's token
	// decides, so these are alice's own missing files.
	spoofTargets := []targetPair{
		{"/workspace/%s", "secret.md", "nope-t2.md"},
		{"/workspace/%s", "other.md", "nope-other.md"},
		{"/ticket/%s", "x.md", "nope-k2.md"},
		{"/ticket/%s", "y.md", "nope-y.md"},
	}
	spoofT1Targets := []targetPair{
		{"/workspace/%s", "same.md", "nope-t1.md"},
		{"/ticket/%s", "bobk1.md", "nope-k1.md"},
	}

	// Read-only calls first, then writes and deletes: a spelling that is a
	// plain (odd) name in alice's own mounts is created and removed for the
	// hit and the miss alike, so both keep meeting the same state.
	for _, c := range readOnlyFS {
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
	for _, root := range []string{"/", "/workspace", "/ticket", "/skills"} {
		for _, c := range globFrom(root) {
			for _, p := range globTargets {
				ip.attempt(alice, "alice", c, p)
			}
		}
	}

	// Every SkillsService RPC, aimed at a skill reference.
	exportText := func(data []byte) string {
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
	skillCalls := []rpcCall{
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
	skillRefs := []targetPair{
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
	// A file of alice's skill, reaching out of its folder.
	skillFileCalls := []rpcCall{
		{name: "ReadSkillFile(aliceskill, file)", call: func(ctx context.Context, file string) rpcAnswer {
			r, err := sc.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: "aliceskill", File: file})
			return rpcAnswer{protoText(r), err}
		}},
	}
	skillFiles := []targetPair{
		{"../../../bob/skills/cat/bobskill/%s", "SKILL.md", "NOPE.md"},
		{"../../../bob/skills/cat/%s/ref.md", "bobskill", "nothing"},
		{"../../../bob/threads/t2/%s", "secret.md", "nope.md"},
		{"/bob/skills/cat/bobskill/%s", "ref.md", "nope.md"},
		{"..%%2f..%%2f..%%2fbob/skills/cat/bobskill/%s", "ref.md", "nope.md"},
		{"./../../cat/bobskill/%s", "ref.md", "nope.md"},
	}
	// Calls that take a category or a query.
	categoryCalls := []rpcCall{
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
	categories := []targetPair{
		{"%s", "cat", "nothing"},
		{"../bob/skills/%s", "cat", "nothing"},
		{"/bob/skills/%s", "cat", "nothing"},
	}
	searchCall := rpcCall{name: "SearchSkills(query)", call: func(ctx context.Context, q string) rpcAnswer {
		r, err := sc.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: q})
		return rpcAnswer{protoText(r), err}
	}}
	queries := []targetPair{
		{"%s", "zanzibar", "qwertyuiop"},
		{"%s", "bobskill", "nothing"},
		{"cat/%s", "bobskill", "nothing"},
	}

	for _, c := range skillCalls {
		for _, p := range skillRefs {
			ip.attempt(alice, "alice", c, p)
		}
		for _, p := range []targetPair{{"%s", "bobskill", "nothing"}, {"/skills/cat/%s", "bobskill", "nothing"}} {
			ip.attempt(spoofed, "alice+bob metadata", c, p)
		}
	}
	for _, c := range skillFileCalls {
		for _, p := range skillFiles {
			ip.attempt(alice, "alice", c, p)
		}
	}
	for _, c := range categoryCalls {
		for _, p := range categories {
			ip.attempt(alice, "alice", c, p)
			ip.attempt(spoofed, "alice+bob metadata", c, p)
		}
	}
	for _, p := range queries {
		ip.attempt(alice, "alice", searchCall, p)
		ip.attempt(spoofed, "alice+bob metadata", searchCall, p)
	}

	// Then the calls that change things, one group of targets at a time,
	// each group's deletes last, so the next group starts from the same
	// state: none of its paths exists in alice's own mounts.
	for _, g := range []struct {
		label   string
		ctx     context.Context
		targets []targetPair
	}{
		{"alice", alice, fileTargets},
		{"alice+bob metadata", spoofed, spoofTargets},
		{"alice+bob t1 metadata", spoofedT1, spoofT1Targets},
	} {
		for _, c := range append(writingFS, deleteFS) {
			for _, p := range g.targets {
				ip.attempt(g.ctx, g.label, c, p)
			}
		}
	}
	for _, p := range dirTargets {
		ip.attempt(alice, "alice", deleteAllFS, p)
	}

	if after := bucketState(t, srv, bucket, guarded...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("objects of bob, thread t2 or ticket K2 changed:\nbefore %v\nafter  %v", before, after)
	}
	// The token still works for alice's own files after all of it.
	ownControls("alice, at the end", alice)
	if procExited(p) {
		t.Fatalf("skillsvc exited:\n%s", p.output())
	}
}

// tokenCase is one bearer token (or authorization header) and the code
// it must get.
type tokenCase struct {
	name  string
	auth  []string // authorization header values; nil sends none
	admin bool     // call AdminService instead of FilesystemService
	want  codes.Code
	// secret is a value the call's error must not quote back.
	secret string
}

// TestTokenAttacksEndToEnd sends forged, expired, misdirected and
// malformed tokens, and valid tokens with hostile claims: every one is
// refused with UNAUTHENTICATED (PERMISSION_DENIED for an agent on
// AdminService), no answer quotes the token, and the binary serves a valid
// token afterwards.
func TestTokenAttacksEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	s3Put(t, srv, bucket)("alice/threads/t1/own.md", "alice's own\n")
	f := newJWTFixture(t)
	const issuer, audience = "https://issuer.e2e.test", "skillsvc-e2e"
	hs := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket),
		hsJWTFlags(f, "--auth.jwt.issuer="+issuer, "--auth.jwt.audience="+audience)...)...)

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	otherRSA, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	pubFile := filepath.Join(t.TempDir(), "jwt-public.pem")
	writeFileAtomic(t, pubFile, pubPEM)
	pk := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), "--auth.mode=jwt", "--auth.jwt.public-key-file="+pubFile)...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now()
	// valid returns claims the hs binary accepts, changed by edit.
	valid := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := agentClaims("alice", "t1", "")
		c["iss"], c["aud"] = issuer, audience
		if edit != nil {
			edit(c)
		}
		return c
	}
	hsToken := func(edit func(jwt.MapClaims)) string {
		return signToken(t, jwt.SigningMethodHS256, f.secret, valid(edit))
	}
	bearer := func(tok string) []string { return []string{"Bearer " + tok} }
	good := hsToken(nil)
	none := signToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid(nil))
	// The same claims with a header naming "none" in another case and the
	// real token's signature kept.
	noneHeader := func(alg string) string {
		parts := strings.Split(good, ".")
		h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
		return base64.RawURLEncoding.EncodeToString(h) + "." + parts[1] + "." + parts[2]
	}
	unsigned := good[:strings.LastIndex(good, ".")+1]
	long := hsToken(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("p", 9<<10) })

	cases := []tokenCase{
		{name: "no authorization", want: codes.Unauthenticated},
		{name: "empty authorization", auth: []string{""}, want: codes.Unauthenticated},
		{name: "Basic scheme", auth: []string{"Basic YWxpY2U6aHVudGVyMg=="}, want: codes.Unauthenticated, secret: "YWxpY2U6aHVudGVyMg=="},
		{name: "Basic scheme with a valid token", auth: []string{"Basic " + good}, want: codes.Unauthenticated, secret: good},
		{name: "bare token, no scheme", auth: []string{good}, want: codes.Unauthenticated, secret: good},
		{name: "Bearer and nothing", auth: []string{"Bearer "}, want: codes.Unauthenticated},
		{name: "two tokens", auth: []string{"Bearer " + good, "Bearer " + good}, want: codes.Unauthenticated, secret: good},
		{name: "malformed", auth: bearer("not-a-jwt-at-all"), want: codes.Unauthenticated, secret: "not-a-jwt-at-all"},
		{name: "malformed segments", auth: bearer("aGVsbG8.d29ybGQ.c2lnbmF0dXJl"), want: codes.Unauthenticated, secret: "aGVsbG8.d29ybGQ.c2lnbmF0dXJl"},
		{name: "not base64", auth: bearer("@@@.###.$$$"), want: codes.Unauthenticated},
		{name: "signature tampered", auth: bearer(good[:len(good)-2] + "AA"), want: codes.Unauthenticated, secret: good[:len(good)-2]},
		{name: "signature removed", auth: bearer(unsigned), want: codes.Unauthenticated, secret: unsigned},
		{name: "alg none", auth: bearer(none), want: codes.Unauthenticated, secret: none},
		{name: "alg None with a real signature", auth: bearer(noneHeader("None")), want: codes.Unauthenticated, secret: noneHeader("None")},
		{name: "alg NONE", auth: bearer(noneHeader("NONE")), want: codes.Unauthenticated},
		{name: "alg HS512 header on an HS256 signature", auth: bearer(noneHeader("HS512")), want: codes.Unauthenticated},
		{name: "RS256 when only a secret is configured", auth: bearer(signToken(t, jwt.SigningMethodRS256, rsaKey, valid(nil))), want: codes.Unauthenticated},
		{name: "wrong key", auth: bearer(signToken(t, jwt.SigningMethodHS256, []byte(strings.Repeat("wrong-key-", 4)), valid(nil))), want: codes.Unauthenticated},
		{name: "kid path", auth: bearer(func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, valid(nil))
			tok.Header["kid"] = "../../../../dev/null"
			s, err := tok.SignedString([]byte{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}()), want: codes.Unauthenticated},
		{name: "too long", auth: bearer(long), want: codes.Unauthenticated, secret: long[:200]},
		{name: "expired", auth: bearer(hsToken(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), want: codes.Unauthenticated},
		{name: "no exp", auth: bearer(hsToken(func(c jwt.MapClaims) { delete(c, "exp") })), want: codes.Unauthenticated},
		{name: "exp as a string", auth: bearer(hsToken(func(c jwt.MapClaims) { c["exp"] = "99999999999" })), want: codes.Unauthenticated},
		{name: "not yet valid", auth: bearer(hsToken(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })), want: codes.Unauthenticated},
		{name: "issued in the future", auth: bearer(hsToken(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })), want: codes.Unauthenticated},
		{name: "wrong audience", auth: bearer(hsToken(func(c jwt.MapClaims) { c["aud"] = "another-service" })), want: codes.Unauthenticated},
		{name: "no audience", auth: bearer(hsToken(func(c jwt.MapClaims) { delete(c, "aud") })), want: codes.Unauthenticated},
		{name: "wrong issuer", auth: bearer(hsToken(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" })), want: codes.Unauthenticated},
		{name: "no issuer", auth: bearer(hsToken(func(c jwt.MapClaims) { delete(c, "iss") })), want: codes.Unauthenticated},
		{name: "missing user", auth: bearer(hsToken(func(c jwt.MapClaims) { delete(c, "user") })), want: codes.Unauthenticated},
		{name: "missing thread", auth: bearer(hsToken(func(c jwt.MapClaims) { delete(c, "thread") })), want: codes.Unauthenticated},
		{name: "user ..", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = ".." })), want: codes.Unauthenticated},
		{name: "user a/b", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = "a/b" })), want: codes.Unauthenticated, secret: "a/b"},
		{name: "user ../bob", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = "../bob" })), want: codes.Unauthenticated, secret: "../bob"},
		{name: "user empty", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = "" })), want: codes.Unauthenticated},
		{name: "user 300 bytes", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = strings.Repeat("a", 300) })), want: codes.Unauthenticated, secret: strings.Repeat("a", 300)},
		{name: "user _shared", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = "_shared" })), want: codes.Unauthenticated, secret: "_shared"},
		{name: "user as a number", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = 42 })), want: codes.Unauthenticated},
		{name: "user as a list", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = []string{"alice"} })), want: codes.Unauthenticated},
		{name: "user with a newline", auth: bearer(hsToken(func(c jwt.MapClaims) { c["user"] = "alice\nbob" })), want: codes.Unauthenticated, secret: "alice\nbob"},
		{name: "thread ..", auth: bearer(hsToken(func(c jwt.MapClaims) { c["thread"] = ".." })), want: codes.Unauthenticated},
		{name: "thread t1/../../bob", auth: bearer(hsToken(func(c jwt.MapClaims) { c["thread"] = "t1/../../bob" })), want: codes.Unauthenticated, secret: "t1/../../bob"},
		{name: "ticket a/b", auth: bearer(hsToken(func(c jwt.MapClaims) { c["ticket"] = "a/b" })), want: codes.Unauthenticated, secret: "a/b"},
		{name: "ticket ..", auth: bearer(hsToken(func(c jwt.MapClaims) { c["ticket"] = ".." })), want: codes.Unauthenticated},
		{name: "scope as a number", auth: bearer(hsToken(func(c jwt.MapClaims) { c["scope"] = 7 })), want: codes.Unauthenticated},
		{name: "agent token on AdminService", auth: bearer(good), admin: true, want: codes.PermissionDenied, secret: good},
		{name: "near-admin scope on AdminService", auth: bearer(hsToken(func(c jwt.MapClaims) { c["scope"] = "skillsvc:admins SKILLSVC:ADMIN skillsvc:admin:x" })), admin: true, want: codes.PermissionDenied},
		{name: "expired admin token on AdminService", auth: bearer(hsToken(func(c jwt.MapClaims) {
			c["scope"], c["exp"] = "skillsvc:admin", now.Add(-time.Hour).Unix()
		})), admin: true, want: codes.Unauthenticated},
	}
	// The public-key binary's cases: HS256 keyed with the public key's own
	// PEM bytes, the classic algorithm-confusion forgery, and its kin.
	pkCases := []tokenCase{
		{name: "HS256 signed with the public key PEM", auth: bearer(signToken(t, jwt.SigningMethodHS256, pubPEM, agentClaims("alice", "t1", ""))), want: codes.Unauthenticated},
		{name: "HS256 signed with the public key DER", auth: bearer(signToken(t, jwt.SigningMethodHS256, pubDER, agentClaims("alice", "t1", ""))), want: codes.Unauthenticated},
		{name: "RS256 from another key", auth: bearer(signToken(t, jwt.SigningMethodRS256, otherRSA, agentClaims("alice", "t1", ""))), want: codes.Unauthenticated},
		{name: "alg none", auth: bearer(signToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, agentClaims("alice", "t1", ""))), want: codes.Unauthenticated},
		{name: "RS256 expired", auth: bearer(signToken(t, jwt.SigningMethodRS256, rsaKey, func() jwt.MapClaims {
			c := agentClaims("alice", "t1", "")
			c["exp"] = now.Add(-time.Hour).Unix()
			return c
		}())), want: codes.Unauthenticated},
	}

	run := func(p *proc, cases []tokenCase) {
		conn := dial(t, p.addr)
		fsc := skillsvcv1.NewFilesystemServiceClient(conn)
		adm := skillsvcv1.NewAdminServiceClient(conn)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				cctx := ctx
				for _, v := range tc.auth {
					cctx = metadata.AppendToOutgoingContext(cctx, "authorization", v)
				}
				// Metadata naming alice must not stand in for a token.
				cctx = as(cctx, "alice", "t1", "")
				var err error
				var body string
				if tc.admin {
					var r *skillsvcv1.DropSkillIndexResponse
					r, err = adm.DropSkillIndex(cctx, &skillsvcv1.DropSkillIndexRequest{User: "alice"})
					body = protoText(r)
				} else {
					var r *skillsvcv1.ReadResponse
					r, err = fsc.Read(cctx, &skillsvcv1.ReadRequest{Path: "/workspace/own.md"})
					body = protoText(r)
				}
				if status.Code(err) != tc.want {
					t.Errorf("got %v (body %q), want %v", err, body, tc.want)
				}
				msg := status.Convert(err).Message()
				for _, v := range tc.auth {
					tok := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(v, "Bearer "), "Basic "))
					if len(tok) >= 8 && strings.Contains(msg, tok) {
						t.Errorf("error message quotes the token: %q", msg)
					}
					for _, seg := range strings.Split(tok, ".") {
						if len(seg) >= 16 && strings.Contains(msg, seg) {
							t.Errorf("error message quotes part of the token (%.20s...): %q", seg, msg)
						}
					}
				}
				if tc.secret != "" && strings.Contains(msg, tc.secret) {
					t.Errorf("error message quotes %q: %q", tc.secret, msg)
				}
			})
		}
	}
	run(hs, cases)
	run(pk, pkCases)

	// Both binaries still serve valid tokens, and never exited.
	for _, c := range []struct {
		p     *proc
		token string
	}{{hs, good}, {pk, signToken(t, jwt.SigningMethodRS256, rsaKey, agentClaims("alice", "t1", ""))}} {
		if procExited(c.p) {
			t.Fatalf("skillsvc exited:\n%s", c.p.output())
		}
		fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, c.p.addr))
		rd, err := fsc.Read(withBearer(ctx, c.token), &skillsvcv1.ReadRequest{Path: "/workspace/own.md"})
		if err != nil || rd.GetContent() != "alice's own" {
			t.Errorf("valid token after the attacks: %v, %v", rd, err)
		}
	}
	adminTok := hsToken(func(c jwt.MapClaims) { c["scope"] = "openid skillsvc:admin"; delete(c, "user"); delete(c, "thread") })
	if _, err := skillsvcv1.NewAdminServiceClient(dial(t, hs.addr)).DropSkillIndex(withBearer(ctx, adminTok), &skillsvcv1.DropSkillIndexRequest{User: "alice"}); err != nil {
		t.Errorf("admin token on AdminService: %v", err)
	}
	// Neither service log holds a token's signature.
	var sigs []string
	for _, tc := range append(cases, pkCases...) {
		for _, v := range tc.auth {
			if parts := strings.Split(v, "."); len(parts) == 3 && len(parts[2]) >= 16 {
				sigs = append(sigs, parts[2])
			}
		}
	}
	for _, p := range []*proc{hs, pk} {
		logs := p.output()
		for _, sig := range sigs {
			if strings.Contains(logs, sig) {
				t.Errorf("service log holds a token signature %.16s...", sig)
				break
			}
		}
	}
}

// TestKeyRotationEndToEnd rotates the HS256 secret under a running binary:
// the new secret's tokens work within a few reload intervals, the old
// secret's stop working, and a broken secret file keeps the last good one;
// the process is never restarted.
func TestKeyRotationEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	s3Put(t, srv, bucket)("alice/threads/t1/own.md", "alice's own\n")
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f, "--auth.jwt.reload-interval=100ms")...)...)
	pid := p.cmd.Process.Pid
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := func(token string) error {
		cctx, cancel := context.WithTimeout(withBearer(ctx, token), 10*time.Second)
		defer cancel()
		rd, err := fsc.Read(cctx, &skillsvcv1.ReadRequest{Path: "/workspace/own.md"})
		if err == nil && rd.GetContent() != "alice's own" {
			return fmt.Errorf("read %q", rd.GetContent())
		}
		return err
	}
	s1 := signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", ""))
	if err := read(s1); err != nil {
		t.Fatalf("S1 token before rotation: %v", err)
	}

	s2secret := []byte("rotated-secret-" + rand.Text() + rand.Text())
	s2 := signToken(t, jwt.SigningMethodHS256, s2secret, agentClaims("alice", "t1", ""))
	wantCode(t, read(s2), codes.Unauthenticated) // not yet
	writeFileAtomic(t, f.file, s2secret)
	pollUntil(t, 15*time.Second, "a token of the rotated secret to work", func() bool { return read(s2) == nil })
	wantCode(t, read(s1), codes.Unauthenticated)

	// A secret too short to use is refused by the reload; the last good
	// one stays. Wait for the binary to say so, then check.
	warnings := func() int {
		n := 0
		for line := range strings.Lines(p.output()) {
			var rec struct{ Msg string }
			if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "reloading files failed") && strings.Contains(line, f.file) {
				n++
			}
		}
		return n
	}
	seen := warnings()
	writeFileAtomic(t, f.file, []byte("short\n"))
	pollUntil(t, 15*time.Second, "the reload to refuse the short secret", func() bool { return warnings() > seen })
	for range 3 {
		if err := read(s2); err != nil {
			t.Fatalf("S2 token after a broken secret was written: %v", err)
		}
	}
	wantCode(t, read(s1), codes.Unauthenticated)
	wantCode(t, read(signToken(t, jwt.SigningMethodHS256, []byte("short"), agentClaims("alice", "t1", ""))), codes.Unauthenticated)

	if procExited(p) || p.cmd.Process.Pid != pid || syscall.Kill(pid, 0) != nil {
		t.Fatalf("skillsvc (pid %d) is not the process that started:\n%s", pid, p.output())
	}
	if n := strings.Count(p.output(), `"msg":"serving"`); n != 1 {
		t.Errorf("the binary started serving %d times, want once", n)
	}
	for _, s := range [][]byte{f.secret, s2secret} {
		if strings.Contains(p.output(), string(s)) {
			t.Errorf("the service log holds a secret")
		}
	}
}

// tlsDial connects with TLS trusting roots, presenting certs.
func tlsDial(t *testing.T, addr string, roots *x509.CertPool, certs ...tls.Certificate) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// metricsURL finds p's metrics address in its log, as an https URL when
// the binary said it serves TLS there.
func metricsURL(t *testing.T, p *proc) string {
	t.Helper()
	for line := range strings.Lines(p.output()) {
		var rec struct {
			Msg, Addr string
			TLS       bool `json:"tls"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving metrics" {
			if rec.TLS {
				return "https://" + rec.Addr + "/metrics"
			}
			return "http://" + rec.Addr + "/metrics"
		}
	}
	t.Fatalf("no metrics address logged:\n%s", p.output())
	return ""
}

// getMetrics fetches url with TLS trusting roots; it returns the status
// code and body, or the error.
func getMetrics(url string, roots *x509.CertPool, certs ...tls.Certificate) (int, string, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestTLSEndToEnd serves gRPC and metrics over TLS, rotates the server
// certificate to another CA under the running binary, and requires client
// certificates from a second binary.
func TestTLSEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := withBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", "")))
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	call := func(conn *grpc.ClientConn) error {
		cctx, cancel := context.WithTimeout(alice, 10*time.Second)
		defer cancel()
		_, err := skillsvcv1.NewFilesystemServiceClient(conn).Write(cctx, &skillsvcv1.WriteRequest{Path: "/workspace/tls.md", Content: "over tls"})
		return err
	}
	// fresh makes one call on a connection of its own, so it handshakes now.
	fresh := func(addr string, roots *x509.CertPool, certs ...tls.Certificate) error {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs})))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return call(conn)
	}

	ca1, ca2 := certstest.NewCA(t, "ca-one"), certstest.NewCA(t, "ca-two")
	dir := t.TempDir()
	certPEM, keyPEM := ca1.Issue(t, "skillsvc", []string{"localhost"}, loopback, false)
	certFile, keyFile := certstest.WriteFiles(t, dir, certPEM, keyPEM)
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f,
		"--tls.cert-file="+certFile, "--tls.key-file="+keyFile, "--tls.reload-interval=100ms",
		"--metrics.listen=127.0.0.1:0", "--metrics.tls")...)...)

	if err := call(tlsDial(t, p.addr, ca1.Pool())); err != nil {
		t.Fatalf("TLS client trusting CA1: %v", err)
	}
	wantCode(t, call(dial(t, p.addr)), codes.Unavailable)
	wantCode(t, fresh(p.addr, ca2.Pool()), codes.Unavailable)

	murl := metricsURL(t, p)
	if !strings.HasPrefix(murl, "https://") {
		t.Fatalf("metrics served at %s, want https", murl)
	}
	if code, body, err := getMetrics(murl, ca1.Pool()); err != nil || code != http.StatusOK || !strings.Contains(body, "grpc_server_handled_total") {
		t.Errorf("metrics over HTTPS trusting CA1 = %d, %v:\n%.300s", code, err, body)
	}
	if code, _, err := getMetrics("http://"+strings.TrimPrefix(murl, "https://"), nil); err == nil && code == http.StatusOK {
		t.Errorf("metrics answered plain HTTP with 200")
	}

	// Rotate to a certificate from CA2.
	certPEM, keyPEM = ca2.Issue(t, "skillsvc", []string{"localhost"}, loopback, false)
	certstest.WriteFiles(t, dir, certPEM, keyPEM)
	pollUntil(t, 15*time.Second, "the server to present the CA2 certificate", func() bool { return fresh(p.addr, ca2.Pool()) == nil })
	wantCode(t, fresh(p.addr, ca1.Pool()), codes.Unavailable)
	if code, _, err := getMetrics(murl, ca2.Pool()); err != nil || code != http.StatusOK {
		t.Errorf("metrics trusting CA2 after the rotation = %d, %v", code, err)
	}
	if _, _, err := getMetrics(murl, ca1.Pool()); err == nil {
		t.Errorf("metrics still verify with CA1 after the rotation")
	}
	if procExited(p) {
		t.Fatalf("skillsvc exited:\n%s", p.output())
	}

	// Client certificates required.
	clientCA, otherCA := certstest.NewCA(t, "clients"), certstest.NewCA(t, "other-clients")
	mtlsDir := t.TempDir()
	caFile := filepath.Join(mtlsDir, "client-ca.pem")
	writeFileAtomic(t, caFile, clientCA.CertPEM())
	certPEM, keyPEM = ca1.Issue(t, "skillsvc", []string{"localhost"}, loopback, false)
	certFile, keyFile = certstest.WriteFiles(t, mtlsDir, certPEM, keyPEM)
	m := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f,
		"--tls.cert-file="+certFile, "--tls.key-file="+keyFile, "--tls.client-ca-file="+caFile, "--tls.reload-interval=100ms",
		"--metrics.listen=127.0.0.1:0", "--metrics.tls")...)...)
	keyPair := func(certPEM, keyPEM []byte) tls.Certificate {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	worker := keyPair(clientCA.Issue(t, "worker", nil, nil, true))
	stranger := keyPair(otherCA.Issue(t, "worker", nil, nil, true))
	serverUse := keyPair(clientCA.Issue(t, "worker", nil, nil, false)) // right CA, not for clients

	wantCode(t, fresh(m.addr, ca1.Pool()), codes.Unavailable)
	wantCode(t, fresh(m.addr, ca1.Pool(), stranger), codes.Unavailable)
	wantCode(t, fresh(m.addr, ca1.Pool(), serverUse), codes.Unavailable)
	if err := fresh(m.addr, ca1.Pool(), worker); err != nil {
		t.Errorf("client with a certificate from the client CA: %v", err)
	}
	// The certificate admits the connection; the token still decides the call.
	wc := tlsDial(t, m.addr, ca1.Pool(), worker)
	_, err := skillsvcv1.NewFilesystemServiceClient(wc).Write(as(ctx, "alice", "t1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/x.md", Content: "x"})
	wantCode(t, err, codes.Unauthenticated)

	mm := metricsURL(t, m)
	if _, _, err := getMetrics(mm, ca1.Pool()); err == nil {
		t.Errorf("metrics served without a client certificate")
	}
	if code, _, err := getMetrics(mm, ca1.Pool(), worker); err != nil || code != http.StatusOK {
		t.Errorf("metrics with a client certificate = %d, %v", code, err)
	}
}

// TestInsecureRemoteRefused checks that insecure mode will not listen on a
// non-loopback address unless told to, and says which flag allows it.
func TestInsecureRemoteRefused(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		t.Run(listen, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(srv.S3Flags(bucket), "--listen="+listen, "--log.format=json")...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), minioEnv(srv)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
				t.Fatalf("skillsvc --listen=%s in insecure mode: %v, want a non-zero exit\n%s", listen, err, out)
			}
			if !strings.Contains(string(out), "--auth.allow-insecure-remote") {
				t.Errorf("the refusal does not name --auth.allow-insecure-remote:\n%s", out)
			}
		})
	}

	// Allowed, it serves and warns.
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), "--listen=0.0.0.0:0", "--auth.allow-insecure-remote")...)
	var warned bool
	for line := range strings.Lines(p.output()) {
		var rec struct {
			Level, Msg string
			Remote     bool `json:"allow_insecure_remote"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Level == "WARN" && strings.Contains(rec.Msg, "insecure") && rec.Remote {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning about insecure mode on a remote listener:\n%s", p.output())
	}
	_, port, err := net.SplitHostPort(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, net.JoinHostPort("127.0.0.1", port)))
	if _, err := fsc.Write(as(t.Context(), "alice", "t1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "x"}); err != nil {
		t.Errorf("Write to the allowed insecure remote listener: %v", err)
	}

	// jwt mode needs no such flag on any address.
	f := newJWTFixture(t)
	startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f, "--listen=0.0.0.0:0")...)...)
}

// TestAuditEndToEnd checks the audit file: one valid JSON line per change
// and per refusal, with who, what, where and the result, and no raw
// control bytes whatever the caller sent.
func TestAuditEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	f := newJWTFixture(t)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f, "--audit.output="+auditFile)...)...)
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	mint := func(args ...string) string {
		out, err := exec.Command(bin, append([]string{"token", "--secret-file", f.file, "--ttl", "10m"}, args...)...).Output()
		if err != nil {
			t.Fatalf("skillsvc token %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	aliceTok := mint("--user", "alice", "--thread", "t1", "--subject", "alice-agent")
	opsTok := mint("--admin", "--subject", "ops")
	conn := dial(t, p.addr)
	fsc := skillsvcv1.NewFilesystemServiceClient(conn)
	adm := skillsvcv1.NewAdminServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Each call carries its own request ID, which its line must repeat.
	call := func(id, token string) context.Context {
		c := metadata.AppendToOutgoingContext(ctx, "x-request-id", id)
		if token != "" {
			c = withBearer(c, token)
		}
		return c
	}

	if _, err := fsc.Write(call("audit-write", aliceTok), &skillsvcv1.WriteRequest{Path: "/workspace/audit.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = fsc.Write(call("audit-anonymous", ""), &skillsvcv1.WriteRequest{Path: "/workspace/denied.md", Content: "x"})
	wantCode(t, err, codes.Unauthenticated)
	const forged = "forged-token-never-logged"
	_, err = fsc.Write(call("audit-forged", forged), &skillsvcv1.WriteRequest{Path: "/workspace/forged.md", Content: "x"})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := adm.PutLibraryFile(call("audit-admin", opsTok), &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "ops/tool/SKILL.md",
		Data: []byte("---\nname: tool\ndescription: Put by ops.\n---\nbody\n"),
	}); err != nil {
		t.Fatal(err)
	}
	_, err = adm.DropSkillIndex(call("audit-agent-admin", aliceTok), &skillsvcv1.DropSkillIndexRequest{User: "alice"})
	wantCode(t, err, codes.PermissionDenied)
	const hostile = "/workspace/\x1b[31mred\n.md"
	_, hostileErr := fsc.Write(call("audit-hostile", aliceTok), &skillsvcv1.WriteRequest{Path: hostile, Content: "x"})
	if _, err := fsc.Read(call("audit-read", aliceTok), &skillsvcv1.ReadRequest{Path: "/workspace/audit.md"}); err != nil {
		t.Fatal(err)
	}

	// The line is written before the answer is sent: no waiting needed.
	data, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), forged) || strings.Contains(string(data), aliceTok) || strings.Contains(string(data), opsTok) {
		t.Errorf("the audit trail holds a token:\n%s", data)
	}
	lines := map[string][]map[string]any{}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if i := bytes.IndexFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
			t.Errorf("audit line %d has a raw control byte %#x: %q", i+1, line[i], line)
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Errorf("audit line %d is not JSON: %v: %q", i+1, err, line)
			continue
		}
		if rec["log"] != "audit" {
			t.Errorf("audit line %d: log = %v, want audit", i+1, rec["log"])
		}
		id, _ := rec["request_id"].(string)
		lines[id] = append(lines[id], rec)
	}
	one := func(id string) map[string]any {
		t.Helper()
		if len(lines[id]) != 1 {
			t.Errorf("%d audit lines for request %s, want 1:\n%s", len(lines[id]), id, data)
			return map[string]any{}
		}
		return lines[id][0]
	}
	fields := func(id string, want map[string]any) {
		t.Helper()
		rec := one(id)
		for k, v := range want {
			if rec[k] != v {
				t.Errorf("request %s: audit %s = %#v, want %#v (line %v)", id, k, rec[k], v, rec)
			}
		}
	}
	const fsRPC, admRPC = "/skillsvc.v1.FilesystemService/", "/skillsvc.v1.AdminService/"
	fields("audit-write", map[string]any{"rpc": fsRPC + "Write", "user": "alice", "thread": "t1", "subject": "alice-agent",
		"admin": false, "path": "/workspace/audit.md", "result": "OK"})
	fields("audit-anonymous", map[string]any{"rpc": fsRPC + "Write", "authenticated": false, "path": "/workspace/denied.md", "result": "Unauthenticated"})
	fields("audit-forged", map[string]any{"rpc": fsRPC + "Write", "authenticated": false, "path": "/workspace/forged.md", "result": "Unauthenticated"})
	fields("audit-admin", map[string]any{"rpc": admRPC + "PutLibraryFile", "subject": "ops", "admin": true, "path": "ops/tool/SKILL.md", "result": "OK"})
	fields("audit-agent-admin", map[string]any{"rpc": admRPC + "DropSkillIndex", "user": "alice", "subject": "alice-agent",
		"admin": false, "target_user": "alice", "result": "PermissionDenied"})
	for _, id := range []string{"audit-anonymous", "audit-forged"} {
		if u, ok := one(id)["user"]; ok {
			t.Errorf("request %s: an unauthenticated line names user %v", id, u)
		}
	}
	if len(lines["audit-read"]) != 0 {
		t.Errorf("a successful Read was audited: %v", lines["audit-read"])
	}

	// The hostile path: refused or not, its line is one line with the
	// control characters escaped, in the decoded value too.
	rec := one("audit-hostile")
	if want := status.Code(hostileErr).String(); rec["result"] != want {
		t.Errorf("hostile write: audit result %v, call got %v", rec["result"], hostileErr)
	}
	for _, k := range []string{"path", "error"} {
		s, _ := rec[k].(string)
		if strings.ContainsFunc(s, unicode.IsControl) {
			t.Errorf("hostile write: audit %s holds control characters: %q", k, s)
		}
	}
	if s, _ := rec["path"].(string); !strings.Contains(s, "red") || !strings.HasPrefix(s, "/workspace/") {
		t.Errorf("hostile write: audit path = %q, want the path escaped", s)
	}
}
