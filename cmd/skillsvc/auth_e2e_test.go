package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
)

// TestTokenEndToEnd runs the binary in jwt mode and mints a token with
// `skillsvc token`: the token is accepted, the identity metadata alone is
// not, and the token's identity is the one used (alice's workspace, not
// the one the metadata names).
func TestTokenEndToEnd(t *testing.T) {
	bin := binary(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("e2e-secret-", 4)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "token", "--user", "alice", "--thread", "t1", "--ttl", "10m", "--auth.jwt.secret-file", secret).Output()
	if err != nil {
		t.Fatalf("skillsvc token: %v", err)
	}
	token := strings.TrimSpace(string(out))
	p := startBinary(t, nil, "--data-dir=data", "--auth.mode=jwt", "--auth.jwt.secret-file="+secret)
	fsc := skillsvcv1.NewFilesystemServiceClient(dial(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err = fsc.Write(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "x"})
	grpctest.WantCode(t, err, codes.Unauthenticated)

	// The metadata names bob; the token says alice, and wins.
	withToken := grpctest.WithBearer(grpctest.AsCaller(ctx, "bob", "t9", ""), token)
	if _, err := fsc.Write(withToken, &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "x"}); err != nil {
		t.Fatalf("Write with a token: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.cmd.Dir, "data", "alice", "threads", "t1", "a.md")); err != nil {
		t.Errorf("the write did not land in the token's workspace: %v", err)
	}
	_, err = fsc.Write(grpctest.WithBearer(ctx, token+"x"), &skillsvcv1.WriteRequest{Path: "/workspace/a.md", Content: "y"})
	grpctest.WantCode(t, err, codes.Unauthenticated)
}
