package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/signing"
)

// writeKeyPair writes name.key (PKCS#8 PEM) and name.pub into dir.
func writeKeyPair(t *testing.T, dir, name, kind string) (key, pub string) {
	t.Helper()
	var k any
	if kind == "ed25519" {
		_, k, _ = ed25519.GenerateKey(rand.Reader)
	} else {
		k, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	key, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	s, err := signing.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, s.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return key, pub
}

// TestSignaturePolicyEndToEnd: through the real binary on MinIO, with a
// policy requiring alice's library's versions to be signed by "release":
// an unsigned push is refused going live, naming the key; a signature by
// another key does not let it go live; signed by release it goes live,
// verifies offline with skillctl verify, and GetSkill and MCP skills/get
// carry its provenance. The server refuses a tampered bundle and a bundle
// of other files (digest mismatch).
func TestSignaturePolicyEndToEnd(t *testing.T) {
	keys := t.TempDir()
	relKey, relPub := writeKeyPair(t, keys, "release", "ed25519")
	otherKey, otherPub := writeKeyPair(t, keys, "other", "ecdsa")

	s := serveLibrary(t, e2eLibrary, served{http: true, args: []string{"--library.signing-keys=release=" + relPub, "--library.require-signature=user:*=release"}})
	addr := s.Addrs["serving"]
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}

	dir := writeSkill(t, "report", map[string]string{"SKILL.md": "---\nname: report\ndescription: Write weekly reports.\n---\nWrite the report for $ARGUMENTS.\n"})
	r := runCtl(t, env, "push", dir, "--category", "docs")
	if r.code != exitServer || !strings.Contains(r.stderr, "FailedPrecondition") || !strings.Contains(r.stderr, `key "release"`) {
		t.Fatalf("an unsigned push under the policy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); strings.Contains(got, "report") {
		t.Fatalf("an unsigned version went live: %s", got)
	}
	id := strings.TrimSpace(mustRun(t, env, "versions", "report", "-q").stdout)
	if !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("the refused version is not stored: %q", id)
	}

	// Signed by a key the policy does not name: kept, still not live.
	mustRun(t, env, "sign", "report@"+id, "--key", otherKey)
	if r := runCtl(t, env, "rollback", "report", id); r.code != exitServer || !strings.Contains(r.stderr, "FailedPrecondition") || !strings.Contains(r.stderr, "only") {
		t.Fatalf("live with another key's signature: exit %d\n%s", r.code, r.stderr)
	}

	// Signed by release: it goes live and verifies offline.
	if r := mustRun(t, env, "sign", "report", id, "--key", relKey); !strings.Contains(r.stdout, "signed") {
		t.Errorf("sign: %s", r.stdout)
	}
	mustRun(t, env, "rollback", "report", id)
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); !strings.Contains(got, "report") {
		t.Fatalf("a signed version is not live: %s", got)
	}
	if r := mustRun(t, env, "verify", "report", "--key", relPub); !strings.Contains(r.stdout, "verified report version "+id) {
		t.Errorf("verify: %s", r.stdout)
	}
	mustRun(t, env, "verify", "report@"+id, "--key", otherPub)
	_, strangerPub := writeKeyPair(t, keys, "stranger", "ecdsa")
	if r := runCtl(t, env, "verify", "report", "--key", strangerPub); r.code == 0 || !strings.Contains(r.stderr, "no signature") {
		t.Errorf("verify with a key that signed nothing: exit %d\n%s", r.code, r.stderr)
	}

	// GetSkill's provenance, and an out-of-band skill's.
	type provenance struct {
		Provenance struct {
			Version, Publisher, ScanVerdict, Signature, SignatureKey string
			OutOfBand                                                bool
		}
	}
	var got provenance
	if err := json.Unmarshal([]byte(mustRun(t, env, "show", "report", "--json").stdout), &got); err != nil {
		t.Fatal(err)
	}
	if p := got.Provenance; p.Version != id || p.Publisher != "alice" || p.ScanVerdict != "clean" || p.Signature != "verified" || p.SignatureKey != "release" || p.OutOfBand {
		t.Errorf("GetSkill provenance: %+v", p)
	}
	got = provenance{}
	if err := json.Unmarshal([]byte(mustRun(t, env, "show", "notes", "--json").stdout), &got); err != nil {
		t.Fatal(err)
	}
	if p := got.Provenance; p.Version != "" || p.Signature != "unsigned" || !p.OutOfBand {
		t.Errorf("an out-of-band skill's provenance: %+v", p)
	}

	// The server never trusts the client's bundle.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	lib := skillsvcv1.NewLibraryServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(t.Context(), auth.UserKey, "alice", auth.ThreadKey, "t1")
	relData, _ := os.ReadFile(relKey)
	signer, err := signing.ParsePrivateKey(relData)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := signer.Sign(ctx, "report", id)
	if err != nil {
		t.Fatal(err)
	}
	attach := func(version string, b []byte) error {
		_, err := lib.AttachSignature(ctx, &skillsvcv1.AttachSignatureRequest{Name: "report", Version: version, Bundle: b, PublicKey: signer.Public().PEM()})
		return err
	}
	if err := attach(id, bundle); err != nil {
		t.Fatalf("a valid bundle: %v", err)
	}
	tampered := []byte(string(bundle))
	i := strings.Index(string(tampered), `"sig":"`) + len(`"sig":"`) + 3
	tampered[i] ^= 0x01 // another base64 letter: other signature bytes
	if err := attach(id, tampered); status.Code(err) != codes.FailedPrecondition && status.Code(err) != codes.InvalidArgument {
		t.Errorf("a tampered bundle: %v", err)
	}
	// Files changed after signing: the bundle of id attached to their
	// version (also refused going live unsigned).
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: report\ndescription: Write weekly reports.\n---\nWrite a short report.\n"), 0o644)
	if r := runCtl(t, env, "push", dir, "--category", "docs"); r.code != exitServer || !strings.Contains(r.stderr, "FailedPrecondition") {
		t.Fatalf("a changed, unsigned push: exit %d\n%s", r.code, r.stderr)
	}
	vs := strings.Fields(mustRun(t, env, "versions", "report", "-q").stdout)
	if len(vs) != 2 || vs[0] == id {
		t.Fatalf("versions: %v", vs)
	}
	err = attach(vs[0], bundle)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "the bundle signs "+id) {
		t.Errorf("a bundle of other files: %v", err)
	}

	// MCP skills/get and skills/list carry the provenance in _meta.
	h := http.Header{auth.UserKey: {"alice"}, auth.ThreadKey: {"t1"}, "Mcp-Protocol-Version": {"2025-06-18"}}
	c := mcptest.Client(h)
	post := func(sid, body string) (*http.Response, *mcptest.Message) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+s.Addrs["serving http"]+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		m, err := mcptest.Reply(resp.Header.Get("Content-Type"), data)
		if err != nil {
			t.Fatal(err)
		}
		return resp, m
	}
	resp, _ := post("", mcptest.Initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	post(sid, mcptest.Initialized)
	type entry struct {
		URI  string
		Meta map[string]map[string]any `json:"_meta"`
	}
	result := func(method, params string, into any) {
		t.Helper()
		_, m := post(sid, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`)
		if m == nil || m.Error != nil {
			t.Fatalf("%s %s: %+v", method, params, m)
		}
		if err := json.Unmarshal(m.Result, into); err != nil {
			t.Fatal(err)
		}
	}
	mcpGet := func(uri string) map[string]any {
		var res struct{ Skill entry }
		result("skills/get", `{"uri":"`+uri+`"}`, &res)
		return res.Skill.Meta["io.skillsvc/provenance"]
	}
	if p := mcpGet("skill://docs/report/SKILL.md"); p["version"] != id || p["signature"] != "verified" || p["signatureKey"] != "release" || p["scanVerdict"] != "clean" || p["publisher"] != "alice" {
		t.Errorf("skills/get _meta provenance: %v", p)
	}
	if p := mcpGet("skill://notes/SKILL.md"); p["outOfBand"] != true || p["signature"] != "unsigned" {
		t.Errorf("an out-of-band skill's _meta provenance: %v", p)
	}
	// The listing's, from the library's provenance index: the published
	// skill's, and the out-of-band one's as skills/get tells it.
	var list struct{ Skills []entry }
	result("skills/list", `{}`, &list)
	seen := 0
	for _, e := range list.Skills {
		p := e.Meta["io.skillsvc/provenance"]
		switch e.URI {
		case "skill://docs/report/SKILL.md":
			seen++
			if p["version"] != id || p["signature"] != "verified" || p["signatureKey"] != "release" || p["scanVerdict"] != "clean" || p["publisher"] != "alice" {
				t.Errorf("skills/list _meta provenance: %v", p)
			}
		case "skill://notes/SKILL.md":
			seen++
			if p["outOfBand"] != true || p["signature"] != "unsigned" {
				t.Errorf("an out-of-band skill's listed provenance: %v", p)
			}
		}
	}
	if seen != 2 {
		t.Errorf("skills/list: %+v", list.Skills)
	}
}
