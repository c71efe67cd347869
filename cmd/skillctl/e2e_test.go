package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The end-to-end tests run skillctl against the real skillsvc binary on a
// real MinIO, with the settings a deployment gets.

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

var buildDir = sync.OnceValues(func() (string, error) { return testserver.TempDir("skillctl-e2e-") })

// skillsvcBin builds the server once per test run.
var skillsvcBin = sync.OnceValues(func() (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	return testserver.BuildSkillsvc(context.Background(), dir)
})

// skillctlBin builds skillctl itself once, for the tests that run the
// binary rather than run in-process.
var skillctlBin = sync.OnceValues(func() (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "skillctl")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", &exitError{code: 1, err: &buildError{string(out)}}
	}
	return bin, nil
})

type buildError struct{ out string }

func (e *buildError) Error() string { return "go build: " + e.out }

// e2eLibrary is alice's library over a shared one, uploaded with plain S3
// PUTs as authors upload today.
var e2eLibrary = map[string]string{
	"alice/skills/docs/pdf/SKILL.md":            "---\nname: pdf\ndescription: Extract text and tables from PDF files.\n---\n# PDF\nRun scripts/extract.py on $ARGUMENTS.\n",
	"alice/skills/docs/pdf/scripts/extract.py":  "print('extract')\n",
	"alice/skills/docs/pdf/references/forms.md": "# Forms\nFill forms carefully.\n",
	"alice/skills/notes/SKILL.md":               "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting.\n",
	"_shared/skills/data/csv/SKILL.md":          "---\nname: csv\ndescription: Clean and analyze CSV spreadsheets.\n---\nUse pandas.\n",
}

// startServer uploads e2eLibrary to a new bucket and serves it with the
// real binary; it returns the gRPC address.
func startServer(t *testing.T, args ...string) string {
	t.Helper()
	return startServerWith(t, e2eLibrary, args...)
}

// startServerWith is startServer with another library (bucket key ->
// content).
func startServerWith(t *testing.T, lib map[string]string, args ...string) string {
	t.Helper()
	return serveLibrary(t, lib, served{args: args}).Addrs["serving"]
}

// served is how serveLibrary runs skillsvc: extra environment, its HTTP
// listener (MCP, JSON) on or off, and extra flags.
type served struct {
	env  []string
	http bool
	args []string
}

// serveLibrary uploads lib (bucket key -> content) to a new bucket of the
// shared MinIO and serves it with the real binary and the defaults, the
// flags in how added.
func serveLibrary(t *testing.T, lib map[string]string, how served) *testserver.Skillsvc {
	t.Helper()
	srv, bucket := putLibrary(t, lib)
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	listen := []string{"--listen=127.0.0.1:0", "--http.listen="}
	var wait []string
	if how.http {
		listen[1], wait = "--http.listen=127.0.0.1:0", []string{"serving http"}
	}
	s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{
		Bin:  bin,
		Args: append(append(listen, srv.S3Flags(bucket)...), how.args...),
		Env:  append(srv.SkillsvcEnv(), how.env...), Dir: t.TempDir(), Wait: wait,
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// putLibrary uploads lib to a new bucket of the shared MinIO.
func putLibrary(t *testing.T, lib map[string]string) (*testserver.MinIO, string) {
	t.Helper()
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	s3c := srv.Client(t)
	for k, v := range lib {
		if _, err := s3c.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String(k), Body: strings.NewReader(v)}); err != nil {
			t.Fatal(err)
		}
	}
	return srv, bucket
}

func names(t *testing.T, lsJSON string) string {
	t.Helper()
	var resp struct{ Skills []struct{ Name string } }
	if err := json.Unmarshal([]byte(lsJSON), &resp); err != nil {
		t.Fatalf("%v\n%s", err, lsJSON)
	}
	var n []string
	for _, s := range resp.Skills {
		n = append(n, s.Name)
	}
	sort.Strings(n)
	return strings.Join(n, ",")
}

// startJWTServer serves e2eLibrary in jwt mode with a secret of its own;
// mint makes a token file of `skillsvc token` with args (--user, --admin,
// --teams, …) signed by that secret.
func startJWTServer(t *testing.T, args ...string) (addr string, mint func(args ...string) string) {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("skillctl-e2e-", 4)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr = startServer(t, append([]string{"--auth.mode=jwt", "--auth.jwt.secret-file=" + secret}, args...)...)
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	return addr, func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"token", "--ttl", "10m", "--auth.jwt.secret-file", secret}, args...)...).Output()
		if err != nil {
			t.Fatalf("skillsvc token %v: %v", args, err)
		}
		f := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(f, out, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
}

// mustRun runs skillctl and fails the test unless it exits 0.
func mustRun(t *testing.T, env map[string]string, args ...string) ctlResult {
	t.Helper()
	r := runCtl(t, env, args...)
	if r.code != exitOK {
		t.Fatalf("skillctl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// TestCatalogEndToEnd: ls, show, render, pull, enable and disable against
// the real binary, identity from the environment.
func TestCatalogEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}

	r := mustRun(t, env, "ls")
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(line)
		rows[f[0]] = strings.Join(f, " ")
	}
	for name, want := range map[string]string{
		"NAME": "NAME CATEGORY LAYER STATE DESCRIPTION", "pdf": "pdf docs user ok Extract text and tables from PDF files.",
		"csv": "csv data shared ok Clean and analyze CSV spreadsheets.", "notes": "notes - user ok Keep meeting notes tidy.",
	} {
		if rows[name] != want {
			t.Errorf("ls row %q = %q, want %q\n%s", name, rows[name], want, r.stdout)
		}
	}
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); got != "csv,notes,pdf" {
		t.Errorf("ls --json = %s", got)
	}
	if got := names(t, mustRun(t, env, "ls", "--json", "--category", "docs").stdout); got != "pdf" {
		t.Errorf("ls --category docs = %s", got)
	}

	r = mustRun(t, env, "show", "pdf")
	for _, want := range []string{"Path:", "/skills/docs/pdf", "Layer:", "user", "3 files, 162 B", "scripts/extract.py (17 B)", "references/forms.md"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := mustRun(t, env, "show", "pdf", "--raw"); r.stdout != e2eLibrary["alice/skills/docs/pdf/SKILL.md"] {
		t.Errorf("show --raw = %q", r.stdout)
	}
	if r := mustRun(t, env, "render", "pdf", "report.pdf", "--base-dir", "/sandbox/pdf"); !strings.Contains(r.stdout, "Run scripts/extract.py on report.pdf.") || !strings.Contains(r.stdout, "/sandbox/pdf") {
		t.Errorf("render = %q", r.stdout)
	}

	// pull, then the pulled folder validates: what the server holds is a
	// valid skill folder on disk again.
	dir := filepath.Join(t.TempDir(), "pdf")
	mustRun(t, env, "pull", "pdf", dir)
	for _, rel := range []string{"SKILL.md", "scripts/extract.py", "references/forms.md"} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(b) != e2eLibrary["alice/skills/docs/pdf/"+rel] {
			t.Errorf("pulled %s = %q, %v", rel, b, err)
		}
	}
	mustRun(t, env, "validate", dir)

	mustRun(t, env, "disable", "notes")
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); got != "csv,pdf" {
		t.Errorf("after disable: %s", got)
	}
	if r := mustRun(t, env, "ls", "--all"); !strings.Contains(r.stdout, "disabled") {
		t.Errorf("ls --all:\n%s", r.stdout)
	}
	mustRun(t, env, "enable", "notes")
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); got != "csv,notes,pdf" {
		t.Errorf("after enable: %s", got)
	}

	// Shell completion offers the catalog's names.
	if r := mustRun(t, env, "__complete", "show", "p"); !strings.Contains(r.stdout, "pdf\tExtract text") || strings.Contains(r.stdout, "csv") {
		t.Errorf("completion of show p:\n%s", r.stdout)
	}
	if r := runCtl(t, env, "show", "nope"); r.code != exitNotFound || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("show nope: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCtl(t, env, "pull", "nope", filepath.Join(t.TempDir(), "x")); r.code != exitNotFound {
		t.Errorf("pull nope: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCtl(t, map[string]string{"SKILLCTL_TARGET": addr}, "ls"); r.code != exitServer || !strings.Contains(r.stderr, "Unauthenticated") {
		t.Errorf("no identity: exit %d\n%s", r.code, r.stderr)
	}
}

// TestTokenEndToEnd: in jwt mode a token minted by `skillsvc token`, read
// from a config context's token file, is who skillctl calls as.
func TestTokenEndToEnd(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("skillctl-e2e-", 4)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, "--auth.mode=jwt", "--auth.jwt.secret-file="+secret)
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "token", "--user", "alice", "--thread", "t1", "--ttl", "10m", "--auth.jwt.secret-file", secret).Output()
	if err != nil {
		t.Fatalf("skillsvc token: %v", err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, out, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	mustRun(t, env, "config", "set-context", "jwt", "--target", addr, "--token-file", tokenFile)
	// The metadata names bob; the token says alice, and wins.
	if got := names(t, mustRun(t, env, "ls", "--json", "--user", "bob").stdout); got != "csv,notes,pdf" {
		t.Errorf("ls with a token = %s", got)
	}
	env["SKILLCTL_TOKEN"] = "not-a-token"
	env["SKILLCTL_TOKEN_FILE"] = ""
	if r := runCtl(t, env, "ls"); r.code != exitServer || !strings.Contains(r.stderr, "Unauthenticated") {
		t.Errorf("a bad token: exit %d\n%s", r.code, r.stderr)
	}
}

// TestBinary runs the built skillctl: help documents the commands and exit
// codes, completion scripts are made, validate's exit code is CI's.
func TestBinary(t *testing.T) {
	bin, err := skillctlBin()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"validate", "push", "pull", "versions", "label", "rollback", "approve", "reject", "enable", "disable", "rm", "watch", "config", "completion", "Exit codes:", "SKILLCTL_TARGET"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if out, err := exec.Command(bin, "completion", shell).Output(); err != nil || !strings.Contains(string(out), "skillctl") {
			t.Errorf("completion %s: %v", shell, err)
		}
	}
	bad := writeSkill(t, "pdf", map[string]string{"SKILL.md": "---\nname: pdf\n---\n"})
	cmd := exec.Command(bin, "validate", bad)
	out, err = cmd.Output()
	if cmd.ProcessState.ExitCode() != exitInvalid || !strings.Contains(string(out), "description-required") {
		t.Errorf("validate: exit %d, %v\n%s", cmd.ProcessState.ExitCode(), err, out)
	}
	if err := exec.Command(bin, "nosuchcommand").Run(); err == nil || err.(*exec.ExitError).ExitCode() != exitUsage {
		t.Errorf("unknown command: %v", err)
	}
}

// TestLibraryEndToEnd: push, versions, label, pin, rollback and rm through
// the real binary; a refused push lists every problem and changes nothing.
func TestLibraryEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	v1 := "---\nname: report\ndescription: Write weekly reports.\n---\nWrite the report for $ARGUMENTS.\n"
	v2 := "---\nname: report\ndescription: Write weekly reports.\n---\nWrite a short report for $ARGUMENTS.\n"
	dir := writeSkill(t, "report", map[string]string{"SKILL.md": v1, "templates/week.md": "# Week\n", ".git/HEAD": "x"})

	id1 := strings.TrimSpace(mustRun(t, env, "push", dir, "--category", "docs", "-m", "first", "-q").stdout)
	if !strings.HasPrefix(id1, "sha256:") {
		t.Fatalf("push -q printed %q", id1)
	}
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); got != "csv,notes,pdf,report" {
		t.Errorf("after push: %s", got)
	}
	r := mustRun(t, env, "show", "report")
	if !strings.Contains(r.stdout, "/skills/docs/report") || !strings.Contains(r.stdout, "templates/week.md") || strings.Contains(r.stdout, ".git") {
		t.Errorf("show after push:\n%s", r.stdout)
	}
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(v2), 0o644)
	id2 := strings.TrimSpace(mustRun(t, env, "push", dir, "--category", "docs", "-q").stdout)
	if id2 == id1 {
		t.Fatal("a changed folder kept its version id")
	}
	r = mustRun(t, env, "versions", "report", "--json")
	var vs struct {
		Versions []struct {
			ID     string
			Labels []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &vs); err != nil || len(vs.Versions) != 2 || vs.Versions[0].ID != id2 || vs.Versions[1].ID != id1 {
		t.Fatalf("versions = %v %s", err, r.stdout)
	}
	mustRun(t, env, "label", "report", shortID(id1), "production")
	if r := mustRun(t, env, "show", "report", "--version", "production", "--raw"); r.stdout != v1 {
		t.Errorf("show --version production = %q", r.stdout)
	}
	if r := mustRun(t, env, "render", "report", "x", "--version", shortID(id1)); !strings.Contains(r.stdout, "Write the report for x.") {
		t.Errorf("render a pinned version = %q", r.stdout)
	}
	pinned := filepath.Join(t.TempDir(), "report")
	mustRun(t, env, "pull", "report", pinned, "--version", "production")
	if b, _ := os.ReadFile(filepath.Join(pinned, "SKILL.md")); string(b) != v1 {
		t.Errorf("pull --version production: SKILL.md = %q", b)
	}
	mustRun(t, env, "rollback", "report", "production")
	if r := mustRun(t, env, "show", "report", "--raw"); r.stdout != v1 {
		t.Errorf("after rollback: %q", r.stdout)
	}
	mustRun(t, env, "label", "--remove", "report", "production")
	if r := runCtl(t, env, "show", "report", "--version", "production"); r.code != exitNotFound {
		t.Errorf("a removed label: exit %d\n%s", r.code, r.stderr)
	}

	// A refused push: every problem, exit 1, nothing written.
	bad := writeSkill(t, "report", map[string]string{"SKILL.md": "---\nname: other\n---\nx\n"})
	r = runCtl(t, env, "push", bad, "--category", "docs", "--skip-local-check")
	if r.code != exitInvalid || !strings.Contains(r.stderr, "name") || !strings.Contains(r.stderr, "description") {
		t.Errorf("invalid push: exit %d\n%s", r.code, r.stderr)
	}
	if r := mustRun(t, env, "show", "report", "--raw"); r.stdout != v1 {
		t.Errorf("a refused push changed the skill: %q", r.stdout)
	}

	mustRun(t, env, "rm", "report")
	if got := names(t, mustRun(t, env, "ls", "--json").stdout); got != "csv,notes,pdf" {
		t.Errorf("after rm: %s", got)
	}
}

// TestValidateAgreesWithServer: for every sample, skillctl validate and the
// server's own validation (push --dry-run) agree on whether it may be
// published.
func TestValidateAgreesWithServer(t *testing.T) {
	addr := startServer(t)
	// carol has no library: no sample collides with a skill of hers.
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "carol"}
	for _, s := range loadSamples(t) {
		t.Run(s.Case, func(t *testing.T) {
			dir := writeSkill(t, s.Folder, s.Files)
			local := runCtl(t, env, "validate", dir)
			server := runCtl(t, env, "push", dir, "--dry-run", "--skip-local-check")
			if (local.code == exitOK) != (server.code == exitOK) {
				t.Errorf("validate exit %d, server exit %d\nvalidate:\n%s\nserver:\n%s%s", local.code, server.code, local.stdout, server.stdout, server.stderr)
			}
			if server.code != exitOK && !strings.Contains(server.stdout+server.stderr, "nvalid") {
				t.Errorf("server refused without saying it is invalid:\n%s%s", server.stdout, server.stderr)
			}
		})
	}
}

// TestWatchEndToEnd: watch resumes from a listing's digest and prints the
// change made since.
func TestWatchEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	var ls struct {
		LibraryDigest string `json:"libraryDigest"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "ls", "--json").stdout), &ls); err != nil || ls.LibraryDigest == "" {
		t.Fatalf("ls digest: %v %+v", err, ls)
	}
	mustRun(t, env, "disable", "notes")
	r := mustRun(t, env, "watch", "--since", ls.LibraryDigest, "--count", "1", "--timeout", "0")
	if !strings.Contains(r.stdout, "disabled notes /skills/notes") {
		t.Errorf("watch:\n%s", r.stdout)
	}
}

// TestReviewEndToEnd: with review on, a non-admin's push to the shared
// library is pending, invisible in the catalog, until an admin approves it
// with skillctl; a rejected version stays out. Identities are tokens
// minted by `skillsvc token`, one config context each.
func TestReviewEndToEnd(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("skillctl-review-", 4)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, "--auth.mode=jwt", "--auth.jwt.secret-file="+secret, "--library.review")
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SKILLCTL_CONFIG": filepath.Join(t.TempDir(), "config.yaml")}
	for name, args := range map[string][]string{
		"bob":   {"--user", "bob", "--thread", "t1"},
		"admin": {"--admin", "--user", "ops", "--thread", "t1"},
	} {
		out, err := exec.Command(bin, append([]string{"token", "--ttl", "10m", "--auth.jwt.secret-file", secret}, args...)...).Output()
		if err != nil {
			t.Fatalf("skillsvc token %v: %v", args, err)
		}
		file := filepath.Join(t.TempDir(), name+".token")
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
		mustRun(t, env, "config", "set-context", name, "--target", addr, "--token-file", file, "--library", "shared")
	}
	as := func(ctx string) map[string]string {
		e := map[string]string{"SKILLCTL_CONTEXT": ctx}
		for k, v := range env {
			e[k] = v
		}
		return e
	}
	dir := writeSkill(t, "sql", map[string]string{"SKILL.md": "---\nname: sql\ndescription: Write SQL queries.\n---\nUse CTEs.\n"})
	r := mustRun(t, as("bob"), "push", dir, "--category", "data")
	if !strings.Contains(r.stdout, "pending review sql version sha256:") {
		t.Fatalf("push with review:\n%s", r.stdout)
	}
	id := strings.Fields(r.stdout)[4]
	if got := names(t, mustRun(t, as("bob"), "ls", "--json").stdout); strings.Contains(got, "sql") {
		t.Errorf("a pending version is served: %s", got)
	}
	if r := mustRun(t, as("admin"), "versions", "sql", "--state", "pending", "-q"); strings.TrimSpace(r.stdout) != id {
		t.Errorf("pending versions = %q, want %s", r.stdout, id)
	}
	if r := runCtl(t, as("bob"), "approve", "sql", id); r.code != exitServer || !strings.Contains(r.stderr, "PermissionDenied") {
		t.Errorf("a non-admin approving: exit %d\n%s", r.code, r.stderr)
	}
	// The approved proposal is the version of its files, with their id.
	if r := mustRun(t, as("admin"), "approve", "sql", shortID(id), "-c", "ok"); !strings.Contains(r.stdout, "approved sql version sha256:") {
		t.Errorf("approve:\n%s", r.stdout)
	}
	if got := names(t, mustRun(t, as("bob"), "ls", "--json").stdout); !strings.Contains(got, "sql") {
		t.Errorf("an approved version is not served: %s", got)
	}

	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: sql\ndescription: Write SQL queries.\n---\nNever use CTEs.\n"), 0o644)
	id2 := strings.Fields(mustRun(t, as("bob"), "push", dir, "--category", "data").stdout)[4]
	mustRun(t, as("admin"), "reject", "sql", id2, "-c", "no")
	if r := mustRun(t, as("admin"), "versions", "sql", "--state", "rejected", "-q"); strings.TrimSpace(r.stdout) != id2 {
		t.Errorf("rejected versions = %q, want %s", r.stdout, id2)
	}
	if r := mustRun(t, as("bob"), "render", "sql"); !strings.Contains(r.stdout, "Use CTEs.") {
		t.Errorf("after a rejection the approved version is served: %q", r.stdout)
	}
}

// TestGCEndToEnd: skillctl gc against the real binary with the production
// defaults (a grace of a day): a published version's blobs and a pinned
// thread's are referenced, and every blob is younger than the grace, so a
// collection deletes nothing; the dry run says so too.
func TestGCEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	dir := filepath.Join(t.TempDir(), "haiku")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: haiku\ndescription: Write a haiku.\n---\n5-7-5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "push", dir)

	var resp struct {
		BlobsDeleted int  `json:"blobsDeleted"`
		BlobsKept    int  `json:"blobsKept"`
		DryRun       bool `json:"dryRun"`
	}
	for _, args := range [][]string{{"gc", "--dry-run", "--json"}, {"gc", "--json", "--library", "alice"}} {
		r := mustRun(t, env, args...)
		resp.DryRun = false
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.stdout)
		}
		if resp.BlobsDeleted != 0 || resp.BlobsKept != 1 || resp.DryRun != (args[1] == "--dry-run") {
			t.Errorf("skillctl %v = %+v; want the published SKILL.md's blob kept", args, resp)
		}
	}
	if r := mustRun(t, env, "gc", "--shared"); !strings.Contains(r.stdout, "deleted 0 blobs") {
		t.Errorf("skillctl gc --shared: %s", r.stdout)
	}
	if r := runCtl(t, map[string]string{"SKILLCTL_TARGET": addr}, "gc"); r.code != exitUsage {
		t.Errorf("skillctl gc without a library: exit %d, want usage\n%s", r.code, r.stderr)
	}
}

// TestAuthorTextInertEndToEnd: a version message and a description that
// would set the window title, erase a line, write the clipboard (OSC 52),
// start a C1 control sequence and reverse text with a bidi override, pushed
// to the real binary, reach an admin's terminal escaped in versions, show,
// ls and push; --json keeps them exact.
func TestAuthorTextInertEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	// strconv.Quote's escapes are YAML's: the description holds hostile.
	dir := writeSkill(t, "evil", map[string]string{"SKILL.md": "---\nname: evil\ndescription: " + strconv.Quote(hostile) + "\n---\n" + hostile + "\n"})
	push := mustRun(t, env, "push", dir, "-m", hostile, "-l", "stable")

	var vs struct{ Versions []struct{ Message string } }
	if err := json.Unmarshal([]byte(mustRun(t, env, "versions", "evil", "--json").stdout), &vs); err != nil || len(vs.Versions) != 1 || vs.Versions[0].Message != hostile {
		t.Fatalf("the server did not keep the message as sent (%v): %+v", err, vs)
	}
	var ls struct {
		Skills []struct{ Name, Description string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "ls", "--json").stdout), &ls); err != nil || !strings.Contains(fmt.Sprint(ls.Skills), hostile) {
		t.Fatalf("the server did not keep the description as written (%v): %+v", err, ls)
	}

	for name, r := range map[string]ctlResult{
		"push":       push,
		"versions":   mustRun(t, env, "versions", "evil"),
		"show":       mustRun(t, env, "show", "evil"),
		"show --raw": mustRun(t, env, "show", "evil", "--raw"),
		"render":     mustRun(t, env, "render", "evil"),
		"ls":         mustRun(t, env, "ls"),
		"label":      mustRun(t, env, "label", "evil", "stable", "production"),
	} {
		assertInert(t, name, r.stdout+r.stderr)
		switch name {
		case "versions", "show", "show --raw", "render", "ls":
			if !strings.Contains(r.stdout, hostileEscaped) {
				t.Errorf("%s does not show the text escaped:\n%s", name, r.stdout)
			}
		}
	}
	// The server's errors quote what the caller sent; printed inert too.
	r := runCtl(t, env, "show", "evil"+hostile)
	if r.code != exitNotFound && r.code != exitServer {
		t.Errorf("show of a hostile name: exit %d\n%s", r.code, r.stderr)
	}
	assertInert(t, "an error", r.stdout+r.stderr)
}
