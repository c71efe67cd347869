package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/filewatch/filewatchtest"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The tests in this file attack the binary's token checks from the
// outside: forged and hostile tokens, and key rotation under a running binary.

// jwtFixture is an HS256 secret file and what signs tokens for it.
type jwtFixture struct {
	file   string
	secret []byte
}

func newJWTFixture(t *testing.T) jwtFixture {
	t.Helper()
	secret := []byte("identity-e2e-" + rand.Text() + rand.Text())
	file := filepath.Join(t.TempDir(), "jwt-secret")
	filewatchtest.Replace(t, file, append(slices.Clone(secret), '\n'))
	return jwtFixture{file: file, secret: secret}
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

// hsJWTFlags are the flags of a binary that verifies tokens with f's secret.
func hsJWTFlags(f jwtFixture, extra ...string) []string {
	return append([]string{"--auth.mode=jwt", "--auth.jwt.secret-file=" + f.file}, extra...)
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
	filewatchtest.Replace(t, pubFile, pubPEM)
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
	// One bit of the signature flipped: rewriting its last characters
	// instead could leave the same bytes (a signature ending in "AA", or
	// differing only in the last character's padding bits).
	tampered := func() string {
		sig, err := base64.RawURLEncoding.DecodeString(good[len(unsigned):])
		if err != nil || len(sig) == 0 {
			t.Fatalf("the token's signature does not decode: %v", err)
		}
		sig[len(sig)/2] ^= 1
		return unsigned + base64.RawURLEncoding.EncodeToString(sig)
	}()
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
		{name: "signature tampered", auth: bearer(tampered), want: codes.Unauthenticated, secret: tampered},
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
					cctx = metadata.AppendToOutgoingContext(cctx, auth.AuthorizationKey, v)
				}
				// Metadata naming alice must not stand in for a token.
				cctx = grpctest.AsCaller(cctx, "alice", "t1", "")
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
		rd, err := fsc.Read(grpctest.WithBearer(ctx, c.token), &skillsvcv1.ReadRequest{Path: "/workspace/own.md"})
		if err != nil || rd.GetContent() != "alice's own" {
			t.Errorf("valid token after the attacks: %v, %v", rd, err)
		}
	}
	adminTok := hsToken(func(c jwt.MapClaims) { c["scope"] = "openid skillsvc:admin"; delete(c, "user"); delete(c, "thread") })
	if _, err := skillsvcv1.NewAdminServiceClient(dial(t, hs.addr)).DropSkillIndex(grpctest.WithBearer(ctx, adminTok), &skillsvcv1.DropSkillIndexRequest{User: "alice"}); err != nil {
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
		cctx, cancel := context.WithTimeout(grpctest.WithBearer(ctx, token), 10*time.Second)
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
	grpctest.WantCode(t, read(s2), codes.Unauthenticated) // not yet
	filewatchtest.Replace(t, f.file, s2secret)
	pollUntil(t, 15*time.Second, "a token of the rotated secret to work", func() bool { return read(s2) == nil })
	grpctest.WantCode(t, read(s1), codes.Unauthenticated)

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
	filewatchtest.Replace(t, f.file, []byte("short\n"))
	pollUntil(t, 15*time.Second, "the reload to refuse the short secret", func() bool { return warnings() > seen })
	for range 3 {
		if err := read(s2); err != nil {
			t.Fatalf("S2 token after a broken secret was written: %v", err)
		}
	}
	grpctest.WantCode(t, read(s1), codes.Unauthenticated)
	grpctest.WantCode(t, read(signToken(t, jwt.SigningMethodHS256, []byte("short"), agentClaims("alice", "t1", ""))), codes.Unauthenticated)

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
