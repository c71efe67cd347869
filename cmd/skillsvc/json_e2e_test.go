package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errorinfo"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// jsonCase is one request sent both over gRPC and as JSON over HTTP.
type jsonCase struct {
	method string // Service/Method, without the package
	body   string // the request in the protobuf JSON mapping
	want   codes.Code
	anon   bool // no identity headers
	admin  bool // x-skillsvc-admin: true (LibraryService's admin in insecure mode)
}

// TestJSONOverHTTPEndToEndMinIO sends every unary RPC of the four
// services, succeeding and failing, once over gRPC (as thread tg; admin
// calls for user ag) and once as JSON over HTTP (as thread th; admin calls
// for user ah), so writes do not collide: each must end
// with the same code, the HTTP status grpc-gateway maps that code to, and
// on success the same response.
func TestJSONOverHTTPEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/writing/release-notes/SKILL.md", "---\nname: release-notes\ndescription: Write release notes. Use for changelogs.\n---\n# Release notes\nGroup changes. $ARGUMENTS\n")
	put("alice/skills/writing/release-notes/references/style.md", "# Style\nShort lines.\n")
	put("alice/skills/data/csv-summary/SKILL.md", "---\nname: csv-summary\ndescription: Summarize CSV files.\n---\n# CSV\n")
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), "--library.review")...)
	conn := dial(t, p.addr)
	// LibraryService's cases act on a library of each channel's own (libg,
	// libh) and a pending shared skill of each (sql-g, sql-h), published
	// here; vars names what differs between the channels, in the requests
	// and the responses.
	vars := map[string]map[string]string{}
	// AttachSignature's case signs each channel's $V1 with one key.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	signer, err := signing.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"g", "h"} {
		v := map[string]string{"$USER": "a" + ch, "$LIB": "lib" + ch, "$SQL": "sql-" + ch}
		setup, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin := metadata.AppendToOutgoingContext(grpctest.AsCaller(setup, "alice", "setup", ""), auth.AdminKey, "true")
		lib := skillsvcv1.NewLibraryServiceClient(conn)
		for i, body := range []string{"First.\n", "Second.\n"} {
			r, err := pushFolder(admin, lib, &skillsvcv1.PublishSkillHeader{Library: &skillsvcv1.LibraryRef{User: v["$LIB"]}, Name: "notes"},
				map[string]string{"SKILL.md": skillMDOf("notes", "Notes.", body)})
			if err != nil {
				t.Fatal(err)
			}
			v[fmt.Sprintf("$V%d", i+1)] = r.GetVersion().GetId()
		}
		bundle, err := signer.Sign(setup, "notes", v["$V1"])
		if err != nil {
			t.Fatal(err)
		}
		v["$BUNDLE"], v["$PUB"] = base64.StdEncoding.EncodeToString(bundle), base64.StdEncoding.EncodeToString(signer.Public().PEM())
		sqlMD := skillMDOf(v["$SQL"], "Query databases.", "Body.\n")
		sum := sha256.Sum256([]byte(sqlMD))
		v["$SQLSUM"] = hex.EncodeToString(sum[:])
		r, err := pushFolder(grpctest.AsCaller(setup, "alice", "setup", ""), lib, &skillsvcv1.PublishSkillHeader{Library: &skillsvcv1.LibraryRef{Shared: true}, Name: v["$SQL"]},
			map[string]string{"SKILL.md": sqlMD})
		if err != nil || r.GetVersion().GetState() != skillsvcv1.VersionState_VERSION_STATE_PENDING {
			t.Fatalf("a pending shared publish: %v %v", r, err)
		}
		v["$PENDING"] = r.GetVersion().GetId()
		// The version an approval makes: the files' own id, not the proposal's.
		if r, err = pushFolder(admin, lib, &skillsvcv1.PublishSkillHeader{Library: &skillsvcv1.LibraryRef{Shared: true}, Name: v["$SQL"], ValidateOnly: true},
			map[string]string{"SKILL.md": sqlMD}); err != nil {
			t.Fatal(err)
		}
		v["$SQLID"] = r.GetVersion().GetId()
		vars[ch] = v
	}
	expand := func(s, ch string) string {
		for k, v := range vars[ch] {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}

	cases := []jsonCase{
		{method: "FilesystemService/Write", body: `{"path":"/workspace/a.md","content":"one\ntwo\n"}`},
		{method: "FilesystemService/Write", body: `{"path":"/workspace/a.md","content":"x","mustNotExist":true}`, want: codes.AlreadyExists},
		{method: "FilesystemService/Write", body: `{"path":"/workspace/a.md","content":"x","ifMatch":"\"nope\""}`, want: codes.FailedPrecondition},
		{method: "FilesystemService/Write", body: `{"path":"/skills/x.md","content":"x"}`, want: codes.PermissionDenied},
		{method: "FilesystemService/Write", body: `{"path":"/workspace/../etc","content":"x"}`, want: codes.InvalidArgument},
		{method: "FilesystemService/Stat", body: `{"path":"/workspace/a.md"}`},
		{method: "FilesystemService/Read", body: `{"path":"/workspace/a.md","lineNumbers":true}`},
		{method: "FilesystemService/Read", body: `{"path":"/workspace/missing.md"}`, want: codes.NotFound},
		{method: "FilesystemService/Edit", body: `{"path":"/workspace/a.md","oldString":"two","newString":"2"}`},
		{method: "FilesystemService/Edit", body: `{"path":"/workspace/a.md","oldString":"absent","newString":"2"}`, want: codes.FailedPrecondition},
		{method: "FilesystemService/List", body: `{"path":"/workspace","pageSize":10}`},
		{method: "FilesystemService/List", body: `{"path":"/elsewhere"}`, want: codes.NotFound},
		{method: "FilesystemService/Glob", body: `{"pattern":"**/*.md","path":"/skills"}`},
		{method: "FilesystemService/Grep", body: `{"pattern":"Group","path":"/skills"}`},
		{method: "FilesystemService/Grep", body: `{"pattern":"(","regex":true}`, want: codes.InvalidArgument},
		{method: "FilesystemService/Delete", body: `{"path":"/workspace/a.md"}`},
		{method: "FilesystemService/Delete", body: `{"path":"/workspace/a.md"}`, want: codes.NotFound},
		{method: "FilesystemService/List", body: `{"path":"/workspace"}`, anon: true, want: codes.Unauthenticated},
		{method: "SkillsService/ListCategories", body: `{}`},
		{method: "SkillsService/ListSkills", body: `{"pageSize":1}`},
		{method: "SkillsService/ListSkills", body: `{"pageToken":"garbage"}`, want: codes.InvalidArgument},
		{method: "SkillsService/FormatSkills", body: `{"format":"markdown"}`},
		{method: "SkillsService/FormatSkills", body: `{"format":"toml"}`, want: codes.InvalidArgument},
		{method: "SkillsService/GetSkill", body: `{"path":"release-notes"}`},
		{method: "SkillsService/GetSkill", body: `{"path":"no-such-skill"}`, want: codes.NotFound},
		{method: "SkillsService/RenderSkill", body: `{"path":"release-notes","arguments":"v1.2"}`},
		{method: "SkillsService/ReadSkillFile", body: `{"path":"release-notes","file":"references/style.md"}`},
		{method: "SkillsService/ReadSkillFile", body: `{"path":"release-notes","file":"../csv-summary/SKILL.md"}`, want: codes.InvalidArgument},
		{method: "SkillsService/SearchSkills", body: `{"query":"changelog release"}`},
		{method: "SkillsService/SetSkillEnabled", body: `{"path":"csv-summary","enabled":true}`},
		{method: "SkillsService/SetSkillEnabled", body: `{"path":"nope","enabled":false}`, want: codes.NotFound},
		{method: "AdminService/PutLibraryFile", body: `{"library":{"user":"$USER"},"path":"data/notes/SKILL.md","data":"` + b64("---\nname: notes\ndescription: Notes.\n---\n") + `"}`},
		{method: "AdminService/PutLibraryFile", body: `{"library":{"user":"$USER"},"path":"../bob/x"}`, want: codes.InvalidArgument},
		{method: "AdminService/DropSkillIndex", body: `{"user":"$USER"}`},
		{method: "AdminService/DropSkillIndex", body: `{}`, want: codes.InvalidArgument},
		{method: "AdminService/SetUserSkillEnabled", body: `{"user":"$USER","path":"notes","enabled":true}`},
		{method: "AdminService/DeleteLibraryFile", body: `{"library":{"user":"$USER"},"path":"data/notes/SKILL.md"}`},
		{method: "AdminService/DeleteLibraryFile", body: `{"library":{"user":"$USER"},"path":"data/notes/SKILL.md"}`, want: codes.NotFound},
		{method: "AdminService/CollectLibraryGarbage", body: `{"library":{"user":"$USER"},"dryRun":true}`},
		{method: "AdminService/CollectLibraryGarbage", body: `{"library":{"user":"../bob"}}`, want: codes.InvalidArgument},
		{method: "AdminService/DeleteSkillVersions", body: `{"library":{"user":"$USER"},"name":"notes","versions":["sha256:` + strings.Repeat("0", 64) + `"]}`},
		{method: "AdminService/DeleteSkillVersions", body: `{"library":{"user":"$USER"},"name":"notes","versions":["sha256:0"]}`, want: codes.InvalidArgument},
		{method: "AdminService/RejectProposals", body: `{"library":{"user":"$USER"},"createdBefore":"2020-01-01T00:00:00Z"}`},
		{method: "LibraryService/ListSkillVersions", body: `{"library":{"user":"$LIB"},"name":"notes"}`, admin: true},
		{method: "LibraryService/ListSkillVersions", body: `{"library":{"user":"$LIB"},"name":"notes"}`, want: codes.PermissionDenied},
		{method: "LibraryService/GetSkillVersion", body: `{"library":{"user":"$LIB"},"name":"notes","version":"$V1"}`, admin: true},
		{method: "LibraryService/SetSkillLabel", body: `{"library":{"user":"$LIB"},"name":"notes","label":"stable","version":"$V1"}`, admin: true},
		{method: "LibraryService/SetSkillLabel", body: `{"library":{"user":"$LIB"},"name":"notes","label":"-bad","version":"$V1"}`, admin: true, want: codes.InvalidArgument},
		{method: "LibraryService/RollbackSkill", body: `{"library":{"user":"$LIB"},"name":"notes","version":"stable"}`, admin: true},
		{method: "LibraryService/AttachSignature", body: `{"library":{"user":"$LIB"},"name":"notes","version":"$V1","bundle":"$BUNDLE","publicKey":"$PUB"}`, admin: true},
		{method: "LibraryService/AttachSignature", body: `{"library":{"user":"$LIB"},"name":"notes","version":"$V2","bundle":"$BUNDLE","publicKey":"$PUB"}`, admin: true, want: codes.FailedPrecondition},
		{method: "LibraryService/ReviewSkillVersion", body: `{"library":{"shared":true},"name":"$SQL","version":"$PENDING","approve":true}`, want: codes.PermissionDenied},
		{method: "LibraryService/ReviewSkillVersion", body: `{"library":{"shared":true},"name":"$SQL","version":"$PENDING","approve":true,"comment":"ok"}`, admin: true},
		{method: "LibraryService/DeleteSkill", body: `{"library":{"user":"$LIB"},"name":"notes"}`, admin: true},
		{method: "LibraryService/DeleteSkill", body: `{"library":{"user":"$LIB"},"name":"notes"}`, admin: true, want: codes.NotFound},
		{method: "AdminService/DropSkillIndex", body: `{"team":"legal"}`},
		{method: "AdminService/PutLibraryFile", body: `{"library":{"team":"legal"},"path":"nda/SKILL.md","data":"` + b64("---\nname: nda\ndescription: NDA.\n---\n") + `"}`},
		{method: "AdminService/SetSkillProtected", body: `{"library":{"team":"legal"},"name":"nda","protected":true}`},
		{method: "AdminService/SetSkillProtected", body: `{"library":{"user":"$USER"},"name":"nda","protected":true}`, want: codes.InvalidArgument},
		{method: "AdminService/ListProtectedSkills", body: `{"library":{"shared":true}}`},
		{method: "AdminService/ListProtectedSkills", body: `{"library":{"team":"../x"}}`, want: codes.InvalidArgument},
		{method: "AdminService/SetSkillScope", body: `{"library":{"user":"$USER"},"scope":{"name":"mine","include":{"names":["no*"]},"compatibility":"SKILL_SCOPE_COMPATIBILITY_EMPTY_OR_HARNESS"}}`},
		{method: "AdminService/SetSkillScope", body: `{"library":{"team":"legal"},"scope":{"name":"bad","include":{"names":["["]}}}`, want: codes.InvalidArgument},
		{method: "AdminService/ListSkillScopes", body: `{"library":{"user":"$USER"}}`},
		{method: "AdminService/DeleteSkillScope", body: `{"library":{"user":"$USER"},"name":"mine"}`},
		{method: "AdminService/DeleteSkillScope", body: `{"library":{"user":"$USER"},"name":"mine"}`, want: codes.NotFound},
		// Days long past: the same (empty) report over both channels,
		// whatever the other cases' uses counted meanwhile.
		{method: "UsageService/GetUsage", body: `{"from":"2020-01-01","to":"2020-01-02","skill":"release-notes"}`},
		{method: "UsageService/GetUsage", body: `{"library":{"shared":true},"from":"2020-01-01","to":"2020-01-01","skill":"none"}`, admin: true},
		{method: "UsageService/GetUsage", body: `{"library":{"shared":true}}`, want: codes.PermissionDenied},
		{method: "UsageService/GetUsage", body: `{"days":-1}`, want: codes.InvalidArgument},
	}
	requireEveryUnaryRPC(t, cases)

	for i, c := range cases {
		t.Run(strconv.Itoa(i)+"_"+c.method, func(t *testing.T) {
			md, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("skillsvc.v1." + strings.ReplaceAll(c.method, "/", ".")))
			if err != nil {
				t.Fatal(err)
			}
			m := md.(protoreflect.MethodDescriptor)
			// Over gRPC.
			req := dynamicpb.NewMessage(m.Input())
			if err := protojson.Unmarshal([]byte(expand(c.body, "g")), req); err != nil {
				t.Fatalf("case body: %v", err)
			}
			grpcResp := dynamicpb.NewMessage(m.Output())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if !c.anon {
				ctx = grpctest.AsCaller(ctx, "alice", "tg", "")
			}
			if c.admin {
				ctx = metadata.AppendToOutgoingContext(ctx, auth.AdminKey, "true")
			}
			err = conn.Invoke(ctx, "/skillsvc.v1."+c.method, req, grpcResp)
			if got := status.Code(err); got != c.want {
				t.Fatalf("gRPC: %v, want %v", err, c.want)
			}
			// As JSON over HTTP.
			hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1."+c.method, strings.NewReader(expand(c.body, "h")))
			if err != nil {
				t.Fatal(err)
			}
			hreq.Header.Set("Content-Type", "application/json")
			if !c.anon {
				hreq.Header.Set(auth.UserKey, "alice")
				hreq.Header.Set(auth.ThreadKey, "th")
			}
			if c.admin {
				hreq.Header.Set(auth.AdminKey, "true")
			}
			resp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := runtime.HTTPStatusFromCode(c.want); resp.StatusCode != want {
				t.Fatalf("HTTP %d, want %d (%v): %s", resp.StatusCode, want, c.want, body)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id in the response")
			}
			if c.want != codes.OK {
				var st struct {
					Code    codes.Code
					Message string
				}
				if err := json.Unmarshal(body, &st); err != nil || st.Code != c.want || st.Message == "" {
					t.Fatalf("error body %s: want a google.rpc.Status with code %d (%v)", body, c.want, err)
				}
				return
			}
			httpResp := dynamicpb.NewMessage(m.Output())
			if err := protojson.Unmarshal(body, httpResp); err != nil {
				t.Fatalf("response %s: %v", body, err)
			}
			if a, b := channelFree(t, volatileFree(grpcResp), vars["g"]), channelFree(t, volatileFree(httpResp), vars["h"]); a != b {
				t.Errorf("responses differ:\ngRPC %s\nHTTP %s", a, b)
			}
		})
	}
}

// TestJSONOverHTTPRetryAfter: a refusal by the per-user limits is 429 with
// Retry-After, from the RetryInfo the error table attaches.
func TestJSONOverHTTPRetryAfter(t *testing.T) {
	p := startBinary(t, nil, "--data-dir="+t.TempDir(), "--limits.rate=0.01", "--limits.burst=1")
	var codesSeen []int
	// The burst is one unit: ten calls from memory at a tenth each, fewer
	// when the first indexes the example library in storage.
	for len(codesSeen) < 11 && !slices.Contains(codesSeen, http.StatusTooManyRequests) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.SkillsService/ListCategories", strings.NewReader(`{}`))
		req.Header.Set(auth.UserKey, "alice")
		req.Header.Set(auth.ThreadKey, "t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codesSeen = append(codesSeen, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
				t.Errorf("Retry-After %q, want whole seconds >= 1", resp.Header.Get("Retry-After"))
			}
		}
	}
	if codesSeen[0] != http.StatusOK || codesSeen[len(codesSeen)-1] != http.StatusTooManyRequests {
		t.Fatalf("statuses %v, want 200 first and 429 within 11 calls", codesSeen)
	}
}

// TestStorageFullIsNotARateLimit: object storage refusing writes for want
// of space (MinIO's 507 XMinioStorageFull, answered here by a proxy in
// front of a real MinIO, as a full drive or bucket quota makes MinIO
// answer) is RESOURCE_EXHAUSTED "storage is full" with the StorageFull
// reason over gRPC, and 507 Insufficient Storage without Retry-After over
// JSON: not grpc-gateway's 429 for every RESOURCE_EXHAUSTED, which tells a
// client to wait and retry when only an operator making room helps. The
// file keeps its content, and the write succeeds once there is room.
func TestStorageFullIsNotARateLimit(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	proxy, err := testserver.StartS3Proxy(srv.Endpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	p := startBinary(t, minioEnv(srv), "--storage=s3", "--s3.bucket="+bucket, "--s3.endpoint="+proxy.URL, "--s3.path-style", "--s3.region="+srv.Region)
	write := func(content string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+p.httpAddr+"/skillsvc.v1.FilesystemService/Write",
			strings.NewReader(`{"path":"/workspace/a.md","content":"`+content+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(auth.UserKey, "alice")
		req.Header.Set(auth.ThreadKey, "t1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	fs := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	ctx := grpctest.AsCaller(t.Context(), "alice", "t1", "")
	read := func() string {
		t.Helper()
		r, err := fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/a.md"})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetContent()
	}
	if resp, body := write("one"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first write: %d %s", resp.StatusCode, body)
	}

	proxy.Refuse("PutObject", testserver.S3Refusal{Status: http.StatusInsufficientStorage, Code: "XMinioStorageFull"})
	resp, body := write("two")
	var answer struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatalf("storage full over JSON: %d %s: %v", resp.StatusCode, body, err)
	}
	if resp.StatusCode != http.StatusInsufficientStorage || codes.Code(answer.Code) != codes.ResourceExhausted || answer.Message != "storage is full" {
		t.Errorf("storage full over JSON: %d %s; want 507 with RESOURCE_EXHAUSTED %q", resp.StatusCode, body, "storage is full")
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		t.Errorf("storage full over JSON: Retry-After %q, want none: no wait makes room", ra)
	}
	_, err = fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "two"})
	if r, _ := errorinfo.Reason(err); status.Code(err) != codes.ResourceExhausted || r != errorinfo.StorageFull {
		t.Errorf("storage full over gRPC: %v (reason %q), want RESOURCE_EXHAUSTED with reason %s", err, r, errorinfo.StorageFull)
	}
	if got := read(); got != "one" {
		t.Errorf("after refused writes the file holds %q, want %q", got, "one")
	}

	proxy.Refuse("PutObject", testserver.S3Refusal{})
	if resp, body := write("two"); resp.StatusCode != http.StatusOK {
		t.Fatalf("write once there is room: %d %s", resp.StatusCode, body)
	}
	if got := read(); got != "two" {
		t.Errorf("after room was made the file holds %q, want %q", got, "two")
	}
}

// requireEveryUnaryRPC fails when a unary RPC of any service of
// skillsvc.v1 has no succeeding case, so a new RPC (or service) cannot go
// untested here.
func requireEveryUnaryRPC(t *testing.T, cases []jsonCase) {
	t.Helper()
	ok := map[string]bool{}
	for _, c := range cases {
		if c.want == codes.OK {
			ok[c.method] = true
		}
	}
	services := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("skillsvc.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			services++
			s := fd.Services().Get(i)
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				if m.IsStreamingClient() || m.IsStreamingServer() {
					continue
				}
				if name := string(s.Name()) + "/" + string(m.Name()); !ok[name] {
					t.Errorf("no succeeding JSON case for %s", name)
				}
			}
		}
		return true
	})
	// Every service of the package: filesystem, skills, admin, library.
	if services < 4 {
		t.Errorf("only %d services of skillsvc.v1 registered", services)
	}
}

// channelFree is m in JSON with the values of vars (a channel's own
// library, skill and version ids) replaced by their names, so two
// channels' equal answers read the same.
func channelFree(t *testing.T, m proto.Message, vars map[string]string) string {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, k := range []string{"$PENDING", "$SQLID", "$V1", "$V2", "$SQLSUM", "$SQL", "$LIB"} { // the ids first: they are the longest
		if v := vars[k]; v != "" {
			s = strings.ReplaceAll(s, v, k)
		}
	}
	return s
}

// volatileFree clears what differs between two equal calls on different
// threads' files: ETags and modification times.
func volatileFree(m proto.Message) proto.Message {
	m = proto.Clone(m)
	clearVolatile(m.ProtoReflect())
	return m
}

func clearVolatile(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Name() == "etag" || fd.Name() == "modified" || fd.Name() == "create_time" || fd.Name() == "review_time" ||
			fd.Name() == "attach_time" || fd.Name() == "attached_by": // who signed when: each channel's own
			m.Clear(fd)
		case fd.Message() != nil && fd.IsList():
			for i := range v.List().Len() {
				clearVolatile(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			clearVolatile(v.Message())
		}
		return true
	})
}

func b64(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(s))
}
