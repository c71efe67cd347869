package main

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/testserver/kmstest"
)

// startSigning runs skillsvc on a fresh MinIO bucket holding e2eLibrary,
// with the given extra flags and environment, and returns its gRPC
// address.
func startSigning(t *testing.T, env []string, args ...string) string {
	t.Helper()
	return serveLibrary(t, e2eLibrary, served{env: env, http: true, args: args}).Addrs["serving"]
}

// ctlBinary runs the built skillctl with env over a clean environment
// (PATH and HOME kept).
func ctlBinary(t *testing.T, env map[string]string, args ...string) ctlResult {
	t.Helper()
	bin, err := skillctlBin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	// No instance metadata lookups, no shared AWS files: only what env says.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SKILLCTL_CONFIG=" + filepath.Join(t.TempDir(), "config.yaml"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ctlResult{code, out.String(), errb.String()}
}

// pushRefused pushes skill report under a policy requiring a signature:
// refused going live, stored; it returns the version's id.
func pushRefused(t *testing.T, env map[string]string) string {
	t.Helper()
	dir := writeSkill(t, "report", map[string]string{"SKILL.md": "---\nname: report\ndescription: Write weekly reports.\n---\nWrite the report for $ARGUMENTS.\n"})
	if r := runCtl(t, env, "push", dir, "--category", "docs"); r.code != exitServer || !strings.Contains(r.stderr, "FailedPrecondition") {
		t.Fatalf("an unsigned push under the policy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := strings.TrimSpace(mustRun(t, env, "versions", "report", "-q").stdout)
	if !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("the refused version is not stored: %q", id)
	}
	return id
}

// TestSignCosignKeyEndToEnd: a key pair written by the real `cosign
// generate-key-pair` (an encrypted private key) signs through skillctl,
// the password from COSIGN_PASSWORD or --password-file, a wrong or
// missing one refused with a clear error; its cosign.pub is the server's
// policy key; and cosign itself verifies the bundle skillsvc keeps, as an
// attestation of the version's manifest digest.
func TestSignCosignKeyEndToEnd(t *testing.T) {
	cosign := testserver.Cosign(t)
	keys := t.TempDir()
	gen := exec.Command(cosign, "generate-key-pair", "--output-key-prefix", "release")
	gen.Dir = keys
	gen.Env = append(os.Environ(), "COSIGN_PASSWORD=correct horse")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	priv, pub := filepath.Join(keys, "release.key"), filepath.Join(keys, "release.pub")
	data, _ := os.ReadFile(priv)
	if b, _ := pem.Decode(data); b == nil || !strings.HasPrefix(b.Type, "ENCRYPTED ") {
		t.Fatalf("cosign's key is not an encrypted PEM: %.60q", data)
	}
	passFile := filepath.Join(keys, "password")
	os.WriteFile(passFile, []byte("correct horse\n"), 0o600)

	addr := startSigning(t, nil, "--library.signing-keys=release="+pub, "--library.require-signature=user:*=release")
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	id := pushRefused(t, env)

	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"no password":    {env: env, want: "set COSIGN_PASSWORD or give --password-file"},
		"wrong password": {env: with(env, "COSIGN_PASSWORD", "wrong"), want: "wrong password"},
		"wrong file":     {env: with(env, "COSIGN_PASSWORD", "correct horse"), args: []string{"--password-file", pub}, want: "wrong password"},
	} {
		r := ctlBinary(t, tc.env, append([]string{"sign", "report@" + id, "--key", priv}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
	}
	if r := ctlBinary(t, env, "sign", "report@"+id, "--key", priv, "--password-file", passFile); r.code != 0 || !strings.Contains(r.stdout, "signed") {
		t.Fatalf("sign with --password-file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := ctlBinary(t, with(env, "COSIGN_PASSWORD", "correct horse"), "sign", "report@"+id, "--key", priv); r.code != 0 {
		t.Fatalf("sign with COSIGN_PASSWORD: exit %d\n%s", r.code, r.stderr)
	}
	mustRun(t, env, "rollback", "report", id)
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); !strings.Contains(got, "report") {
		t.Fatalf("the version signed by cosign's key is not live: %s", got)
	}
	if r := mustRun(t, env, "verify", "report", "--key", pub); !strings.Contains(r.stdout, "verified report version "+id) {
		t.Errorf("verify: %s", r.stdout)
	}

	// cosign verifies the bundle skillsvc keeps.
	bundle := filepath.Join(keys, "bundle.json")
	os.WriteFile(bundle, keptBundle(t, addr, id), 0o644)
	cosignVerify := func(digest string) ([]byte, error) {
		c := exec.Command(cosign, "verify-blob-attestation", "--bundle", bundle, "--key", pub, "--type", signing.PredicateType,
			"--digest", strings.TrimPrefix(digest, "sha256:"), "--digestAlg", "sha256", "--insecure-ignore-tlog")
		c.Env = os.Environ()
		return c.CombinedOutput()
	}
	if out, err := cosignVerify(id); err != nil {
		t.Errorf("cosign refuses skillsvc's bundle: %v\n%s", err, out)
	}
	if out, err := cosignVerify("sha256:" + strings.Repeat("1", 64)); err == nil {
		t.Errorf("cosign accepts the bundle for another digest:\n%s", out)
	}
}

func with(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// keptBundle is the first signature bundle skillsvc keeps on alice's
// report version id.
func keptBundle(t *testing.T, addr, id string) []byte {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(t.Context(), auth.UserKey, "alice", auth.ThreadKey, "t1")
	got, err := skillsvcv1.NewLibraryServiceClient(conn).GetSkillVersion(ctx, &skillsvcv1.GetSkillVersionRequest{Name: "report", Version: id})
	if err != nil {
		t.Fatal(err)
	}
	sigs := got.GetVersion().GetSignatures()
	if len(sigs) == 0 {
		t.Fatal("no signature kept")
	}
	return sigs[0].GetBundle()
}

// TestSignKMSEndToEnd: an AWS KMS key (a KMS-compatible server, named by
// an awskms:// URI with its endpoint) signs through skillctl without its
// private key ever leaving the KMS; skillsvc's policy names the same URI
// and fetches the public key at start; the signed version goes live and
// verifies offline against the KMS's public key, by URI and as a PEM.
func TestSignKMSEndToEnd(t *testing.T) {
	k := kmstest.Start(t)
	ref, kpub := k.NewSigningKey(t, "skills-release")
	der, err := x509.MarshalPKIXPublicKey(kpub)
	if err != nil {
		t.Fatal(err)
	}
	pubFile := filepath.Join(t.TempDir(), "release.pub")
	os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)

	// The server reaches the KMS with the SDK's usual settings: region and
	// CA bundle here, credentials MinIO's (the KMS takes any).
	addr := startSigning(t, []string{"AWS_REGION=" + k.Region, "AWS_CA_BUNDLE=" + k.CABundle},
		"--library.signing-keys=release="+ref, "--library.require-signature=user:*=release")
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	id := pushRefused(t, env)

	kmsEnv := with(env)
	for name, v := range k.Env() {
		kmsEnv[name] = v
	}
	noCA := with(kmsEnv, "AWS_CA_BUNDLE", "")
	if r := ctlBinary(t, noCA, "sign", "report@"+id, "--key", ref); r.code == 0 || !strings.Contains(r.stderr, "certificate") {
		t.Errorf("signed through a KMS endpoint it does not trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := ctlBinary(t, kmsEnv, "sign", "report@"+id, "--key", ref); r.code != 0 || !strings.Contains(r.stdout, "signed") {
		t.Fatalf("sign with the KMS key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustRun(t, env, "rollback", "report", id)
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); !strings.Contains(got, "report") {
		t.Fatalf("the KMS-signed version is not live: %s", got)
	}
	if r := ctlBinary(t, kmsEnv, "verify", "report", "--key", ref); r.code != 0 || !strings.Contains(r.stdout, "verified report version "+id) {
		t.Errorf("verify by KMS URI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := mustRun(t, env, "verify", "report", "--key", pubFile); !strings.Contains(r.stdout, "verified report version "+id) {
		t.Errorf("verify by the KMS key's PEM: %s", r.stdout)
	}
	var got struct {
		Provenance struct{ Signature, SignatureKey string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "show", "report", "--json").stdout), &got); err != nil {
		t.Fatal(err)
	}
	if p := got.Provenance; p.Signature != "verified" || p.SignatureKey != "release" {
		t.Errorf("the provenance does not name the KMS key: %+v", p)
	}
}
