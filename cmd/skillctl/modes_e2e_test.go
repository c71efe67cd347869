package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
	"github.com/skillsvc/skillsvc/internal/skillrun"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The file-mode tests: every file's executable bit, as its author gave it
// (a push from disk, PutLibraryFile, a plain S3 upload's metadata "mode")
// or by the shebang rule where none was given, in GetSkill's manifest,
// ExportSkill's tar headers, a pulled folder and a materialized copy, live,
// pinned by version and in a pinned thread. Real binary, real MinIO,
// default limits.

// modeFile is a file to write with its mode.
type modeFile struct {
	content string
	mode    fs.FileMode
}

// writeModeTree writes files under dir with their modes (chmod: the umask
// does not apply).
func writeModeTree(t *testing.T, dir string, files map[string]modeFile) {
	t.Helper()
	for rel, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
}

// treeModes is the permission bits of every file under dir, by path.
func treeModes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = st.Mode().Perm()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// modeServer is the binary on a fresh MinIO bucket; before runs first, on
// the empty bucket (plain uploads the first index lists).
type modeServer struct {
	addr   string
	env    map[string]string // skillctl's, as alice on thread t1
	sc     skillsvcv1.SkillsServiceClient
	adm    skillsvcv1.AdminServiceClient
	runner *skillrun.Runner
}

func startModeServer(t *testing.T, before func(srv *testserver.MinIO, bucket string)) *modeServer {
	t.Helper()
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	if before != nil {
		before(srv, bucket)
	}
	bin, err := skillsvcBin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := testserver.RunSkillsvc(t.Context(), testserver.SkillsvcConfig{
		Bin:  bin,
		Args: append([]string{"--listen=127.0.0.1:0", "--http.listen="}, srv.S3Flags(bucket)...),
		Env:  srv.SkillsvcEnv(), Dir: t.TempDir(),
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	addr := s.Addrs["serving"]
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := skillrun.New(conn)
	r.CacheDir = t.TempDir()
	return &modeServer{
		addr: addr, env: map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice", "SKILLCTL_THREAD": "t1"},
		sc: skillsvcv1.NewSkillsServiceClient(conn), adm: skillsvcv1.NewAdminServiceClient(conn), runner: r,
	}
}

// as is a call of alice on thread; pinned reads the thread's pinned
// library.
func as(t *testing.T, thread string, pinned bool) context.Context {
	md := metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, thread)
	if pinned {
		md.Append(auth.PinKey, auth.PinLibrary)
	}
	return metadata.NewOutgoingContext(t.Context(), md)
}

// manifestModes is GetSkill's manifest: each file's mode by its path in
// the skill.
func (s *modeServer) manifestModes(t *testing.T, ctx context.Context, skill, version string) map[string]fs.FileMode {
	t.Helper()
	resp, err := s.sc.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: skill, Version: version})
	if err != nil {
		t.Fatalf("GetSkill %s@%s: %v", skill, version, err)
	}
	out := map[string]fs.FileMode{}
	for _, f := range resp.GetSkill().GetManifest().GetFiles() {
		out[strings.TrimPrefix(f.GetPath(), resp.GetSkill().GetPath()+"/")] = fs.FileMode(f.GetMode())
	}
	return out
}

// exportModes is ExportSkill's archive: each entry's mode by its path in
// the skill.
func (s *modeServer) exportModes(t *testing.T, ctx context.Context, skill, version string) map[string]fs.FileMode {
	t.Helper()
	stream, err := s.sc.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: skill, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("ExportSkill %s@%s: %v", skill, version, err)
		}
		buf.Write(m.GetData())
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fs.FileMode{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		_, rel, _ := strings.Cut(h.Name, "/")
		out[rel] = fs.FileMode(h.Mode)
	}
}

// checkModes asserts want (path in the skill -> mode) of skill (version
// "" for the live copy) in the manifest, the export and a materialized
// copy (read-only: the write bits off), and after skillctl pull unless
// thread is pinned (pull reads the caller's unpinned view).
func (s *modeServer) checkModes(t *testing.T, thread string, pinned bool, skill, version string, want map[string]fs.FileMode) {
	t.Helper()
	ctx := as(t, thread, pinned)
	if got := s.manifestModes(t, ctx, skill, version); !reflect.DeepEqual(got, want) {
		t.Errorf("%s@%s manifest modes:\n got %v\nwant %v", skill, version, got, want)
	}
	if got := s.exportModes(t, ctx, skill, version); !reflect.DeepEqual(got, want) {
		t.Errorf("%s@%s export modes:\n got %v\nwant %v", skill, version, got, want)
	}
	s.runner.CacheDir = t.TempDir() // fetched afresh, not found in another case's cache
	m, err := s.runner.Materialize(ctx, skill, version)
	if err != nil {
		t.Fatalf("materialize %s@%s: %v", skill, version, err)
	}
	readOnly := map[string]fs.FileMode{}
	for rel, mode := range want {
		readOnly[rel] = mode &^ 0o222
	}
	if got := treeModes(t, m.Dir); !reflect.DeepEqual(got, readOnly) {
		t.Errorf("%s@%s materialized modes:\n got %v\nwant %v", skill, version, got, readOnly)
	}
	if pinned {
		return
	}
	dir := filepath.Join(t.TempDir(), skill)
	args := []string{"pull", skill, dir}
	if version != "" {
		args = append(args, "--version", version)
	}
	mustRun(t, s.env, args...)
	if got := treeModes(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("%s@%s pulled modes:\n got %v\nwant %v", skill, version, got, want)
	}
}

// TestFileModesEndToEnd: a folder of mixed modes pushed with skillctl
// push, a version changing one mode only, the first version pinned, a
// thread pinned before a change, PutLibraryFile with and without the
// executable bit, and plain S3 uploads with and without the metadata.
func TestFileModesEndToEnd(t *testing.T) {
	awsCLI := testserver.AWSCLI(t)
	s := startModeServer(t, func(srv *testserver.MinIO, bucket string) {
		src := t.TempDir()
		upload := func(rel, content string, metadata ...string) {
			t.Helper()
			p := filepath.Join(src, strings.ReplaceAll(rel, "/", "_"))
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--endpoint-url", srv.Endpoint, "s3", "cp", p, "s3://" + bucket + "/alice/skills/plain/" + rel}, metadata...)
			cmd := exec.Command(awsCLI, args...)
			cmd.Env = srv.AWSEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		upload("SKILL.md", "---\nname: plain\ndescription: Uploaded with plain S3 PUTs.\n---\nRun tool.\n")
		upload("tool", "echo tool\n", "--metadata", "mode=33261")                      // s3fs's 0100755
		upload("rclone.sh", "#!/bin/sh\necho not run\n", "--metadata", "mode=0100644") // rclone's octal
		upload("guess.sh", "#!/bin/sh\necho guessed\n")                                // no metadata: the shebang counts
		upload("scripts/lib.py", "x = 1\n")                                            // no metadata, no shebang
	})

	t.Run("plain S3 uploads", func(t *testing.T) {
		s.checkModes(t, "t1", false, "plain", "", map[string]fs.FileMode{
			"SKILL.md": 0o644, "tool": 0o755, "rclone.sh": 0o644, "guess.sh": 0o755, "scripts/lib.py": 0o644,
		})
	})

	// A push from disk records each file's mode: not by folder or shebang.
	dir := filepath.Join(t.TempDir(), "modes-demo")
	writeModeTree(t, dir, map[string]modeFile{
		"SKILL.md":       {"---\nname: modes-demo\ndescription: Files of every mode.\n---\nRun scripts/run.sh.\n", 0o644},
		"scripts/run.sh": {"#!/bin/sh\necho run\n", 0o755},
		"scripts/lib.py": {"x = 1\n", 0o644},
		"bin/tool":       {"echo tool\n", 0o755},
		"notes.sh":       {"#!/bin/sh\n# a note, not a script\n", 0o644},
	})
	first := map[string]fs.FileMode{"SKILL.md": 0o644, "scripts/run.sh": 0o755, "scripts/lib.py": 0o644, "bin/tool": 0o755, "notes.sh": 0o644}
	id1 := strings.TrimSpace(mustRun(t, s.env, "push", dir, "-q").stdout)
	t.Run("pushed", func(t *testing.T) { s.checkModes(t, "t1", false, "modes-demo", "", first) })

	// A thread pinned now keeps these modes through the next change.
	if got := s.manifestModes(t, as(t, "pinned", true), "modes-demo", ""); !reflect.DeepEqual(got, first) {
		t.Fatalf("pinned thread manifest modes = %v", got)
	}

	// Only a mode changes: a new version (the manifest digest marks
	// executable files), served with it; the first version keeps its own.
	if err := os.Chmod(filepath.Join(dir, "scripts", "lib.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	second := map[string]fs.FileMode{"SKILL.md": 0o644, "scripts/run.sh": 0o755, "scripts/lib.py": 0o755, "bin/tool": 0o755, "notes.sh": 0o644}
	id2 := strings.TrimSpace(mustRun(t, s.env, "push", dir, "-q").stdout)
	if id2 == id1 || !strings.HasPrefix(id2, "sha256:") {
		t.Fatalf("a push changing a mode only made version %q after %q, want a new one", id2, id1)
	}
	t.Run("mode changed", func(t *testing.T) { s.checkModes(t, "t1", false, "modes-demo", "", second) })
	t.Run("pinned version", func(t *testing.T) { s.checkModes(t, "t1", false, "modes-demo", id1, first) })
	t.Run("pinned thread", func(t *testing.T) { s.checkModes(t, "pinned", true, "modes-demo", "", first) })

	// PutLibraryFile records the mode skillctl admin put reads from disk,
	// or none when the caller gives none (then the shebang counts).
	put := t.TempDir()
	writeModeTree(t, put, map[string]modeFile{
		"SKILL.md": {"---\nname: putty\ndescription: Files stored with PutLibraryFile.\n---\nRun exec.\n", 0o644},
		"exec":     {"echo exec\n", 0o755},
		"bang.sh":  {"#!/bin/sh\necho not executable\n", 0o644},
	})
	for _, rel := range []string{"SKILL.md", "exec", "bang.sh"} {
		mustRun(t, s.env, "admin", "put", "putty/"+rel, filepath.Join(put, rel), "--library", "alice")
	}
	if _, err := s.adm.PutLibraryFile(t.Context(), &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "putty/unrecorded.sh", Data: []byte("#!/bin/sh\necho guessed\n"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.adm.PutLibraryFile(t.Context(), &skillsvcv1.PutLibraryFileRequest{
		Library: &skillsvcv1.LibraryRef{User: "alice"}, Path: "putty/st_mode", Data: []byte("echo st_mode\n"), Mode: 0o100755,
	}); err != nil {
		t.Fatal(err)
	}
	t.Run("PutLibraryFile", func(t *testing.T) {
		s.checkModes(t, "t1", false, "putty", "", map[string]fs.FileMode{
			"SKILL.md": 0o644, "exec": 0o755, "bang.sh": 0o644, "unrecorded.sh": 0o755, "st_mode": 0o755,
		})
	})
}

// TestPublicPDFModesEndToEnd: the public pdf skill, pushed from its folder
// as the fastskills 0.1.4 sdist unpacks it (pinned by sha256 in
// test/selection/registry.json, downloaded at test time, never committed),
// pulled back with every file's mode as the sdist's tar gives it.
func TestPublicPDFModesEndToEnd(t *testing.T) {
	testserver.Integration(t, "the public pdf skill")
	list, err := corpus.ReadList("../../test/selection/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	archive, err := corpus.ArchiveFile(t.Context(), list, "targets-fastskills", "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pdf")
	want := unpackSkill(t, archive, "fastskills-0.1.4/skills/pdf/", dir)
	if want["scripts/extract_form_structure.py"] != 0o755 || want["scripts/fill_fillable_fields.py"] != 0o644 || len(want) < 10 {
		t.Fatalf("the sdist's pdf skill has modes %v: not the pinned package?", want)
	}
	s := startModeServer(t, nil)
	mustRun(t, s.env, "push", dir, "--category", "docs", "-q")
	s.checkModes(t, "t1", false, "pdf", "", want)
}

// unpackSkill writes the files of archive (a .tar.gz) under prefix into
// dir with their tar modes, and returns those modes by path.
func unpackSkill(t *testing.T, archive, prefix, dir string) map[string]fs.FileMode {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]modeFile{}
	out := map[string]fs.FileMode{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(h.Name, prefix)
		if !ok || h.Typeflag != tar.TypeReg || rel == "" {
			continue
		}
		body, err := io.ReadAll(io.LimitReader(tr, 1<<20))
		if err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(h.Mode).Perm()
		files[rel], out[rel] = modeFile{string(body), mode}, mode
	}
	writeModeTree(t, dir, files)
	return out
}
