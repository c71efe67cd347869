package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
)

// pullJSON runs a set pull (or sync) with --json and decodes its report.
func pullJSON(t *testing.T, env map[string]string, args ...string) pullReport {
	t.Helper()
	r := mustRun(t, env, append(args, "--json")...)
	var rep pullReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("skillctl %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return rep
}

func fetchedFolders(rep pullReport) string {
	var f []string
	for _, x := range rep.Fetched {
		f = append(f, x.Folder)
	}
	slices.Sort(f)
	return strings.Join(f, ",")
}

// tree maps every file under dir (slash paths) to its content and mode,
// the lockfile and its lock left out.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == lockName || rel == dirLockName {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%04o %s", info.Mode().Perm(), b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPullSetEndToEnd: a whole catalog pulled flat into a host's skills
// folder with a lockfile; a second pull exports nothing; after a change
// and a deletion upstream a pull fetches only the changed skill and sync
// removes the deleted one, leaving the user's own folder alone.
func TestPullSetEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	dir := filepath.Join(t.TempDir(), ".claude", "skills")

	rep := pullJSON(t, env, "pull", "--all", dir)
	if got := fetchedFolders(rep); got != "csv,notes,pdf" || rep.Exports != 3 || rep.BytesFetched == 0 {
		t.Fatalf("first pull fetched %s with %d exports, %d bytes", got, rep.Exports, rep.BytesFetched)
	}
	files := tree(t, dir)
	if got := keysOf(files); got != "csv/SKILL.md,notes/SKILL.md,pdf/SKILL.md,pdf/references/forms.md,pdf/scripts/extract.py" {
		t.Fatalf("pulled files: %s", got)
	}
	for rel, key := range map[string]string{
		"pdf/SKILL.md": "alice/skills/docs/pdf/SKILL.md", "pdf/scripts/extract.py": "alice/skills/docs/pdf/scripts/extract.py",
		"notes/SKILL.md": "alice/skills/notes/SKILL.md", "csv/SKILL.md": "_shared/skills/data/csv/SKILL.md",
	} {
		if !strings.HasSuffix(files[rel], " "+e2eLibrary[key]) {
			t.Errorf("%s = %q", rel, files[rel])
		}
	}
	lock, err := readLock(dir)
	if err != nil || lock == nil || len(lock.Skills) != 3 || lock.Server != addr || !lock.Selection.All || lock.Layout != layoutFlat || lock.LibraryDigest != rep.LibraryDigest {
		t.Fatalf("lockfile: %v %+v", err, lock)
	}
	// The lockfile holds each file's digest and the mode it was written with.
	for folder, s := range lock.Skills {
		for rel, f := range s.Files {
			if got := files[folder+"/"+rel]; !strings.HasPrefix(got, f.Mode+" ") || f.SHA256 == "" {
				t.Errorf("lockfile %s/%s = %+v, on disk %q", folder, rel, f, got)
			}
		}
	}

	// Nothing changed: nothing is exported.
	rep = pullJSON(t, env, "pull", "--all", dir)
	if rep.Exports != 0 || rep.BytesFetched != 0 || len(rep.Fetched) != 0 || strings.Join(rep.Unchanged, ",") != "csv,notes,pdf" {
		t.Fatalf("second pull: %+v", rep)
	}

	// The user's own folder, a change and a deletion upstream.
	mine := filepath.Join(dir, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "SKILL.md"), []byte("---\nname: mine\ndescription: My own.\n---\nMine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes2 := "---\nname: notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting in five bullets.\n"
	mustRun(t, env, "push", writeSkill(t, "notes", map[string]string{"SKILL.md": notes2}))
	mustRun(t, env, "rm", "pdf")

	// pull fetches the changed skill only and removes nothing.
	rep = pullJSON(t, env, "pull", "--all", dir)
	if got := fetchedFolders(rep); got != "notes" || rep.Exports != 1 || len(rep.Removed) != 0 {
		t.Fatalf("pull after a change: %+v", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes", "SKILL.md")); string(b) != notes2 {
		t.Errorf("notes after the change = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "pdf", "SKILL.md")); err != nil {
		t.Errorf("pull without --sync removed pdf: %v", err)
	}
	// sync, with the lockfile's selection, removes the deleted skill only;
	// --dry-run says so and writes nothing.
	if rep := pullJSON(t, env, "sync", dir, "--dry-run"); strings.Join(rep.Removed, ",") != "pdf" || rep.Exports != 0 {
		t.Fatalf("sync --dry-run: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "pdf", "SKILL.md")); err != nil {
		t.Fatalf("sync --dry-run removed pdf: %v", err)
	}
	rep = pullJSON(t, env, "sync", dir)
	if rep.Exports != 0 || strings.Join(rep.Removed, ",") != "pdf" || len(rep.Fetched) != 0 {
		t.Fatalf("sync: %+v", rep)
	}
	if got := keysOf(tree(t, dir)); got != "csv/SKILL.md,mine/SKILL.md,notes/SKILL.md" {
		t.Errorf("after sync: %s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 { // and the lockfile's lock
		t.Errorf("after sync the folder holds %d entries (a temporary folder left?): %v", len(entries), entries)
	}
	if lock, err := readLock(dir); err != nil || keysOf(lock.Skills) != "csv,notes" {
		t.Errorf("lockfile after sync: %v %v", err, lock)
	}

	// A skill landing on the user's own folder is refused before anything
	// is written; a folder edited since it was pulled is kept while its
	// skill is unchanged.
	mustRun(t, env, "push", writeSkill(t, "mine", map[string]string{"SKILL.md": "---\nname: mine\ndescription: Theirs.\n---\nTheirs.\n"}))
	os.WriteFile(filepath.Join(dir, "csv", "SKILL.md"), []byte("edited"), 0o644)
	r := runCtl(t, env, "pull", "--all", dir)
	if r.code != exitUsage || !strings.Contains(r.stderr, "mine exists and no pull wrote it") {
		t.Errorf("pull onto the user's folder: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "SKILL.md")); !strings.Contains(string(b), "My own.") {
		t.Errorf("the user's folder was overwritten: %q", b)
	}
	mustRun(t, env, "rm", "mine")
	rep = pullJSON(t, env, "sync", dir)
	if strings.Join(rep.Kept, ",") != "csv" || rep.Exports != 0 {
		t.Errorf("sync with an edited folder: %+v", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "csv", "SKILL.md")); string(b) != "edited" {
		t.Errorf("an edited folder was replaced: %q", b)
	}
}

func keysOf[V any](m map[string]V) string {
	return strings.Join(slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}), ",")
}

// TestPullSetSelections: the categories layout, one category, a scope,
// one layer, and two skills that would share a flat folder.
func TestPullSetSelections(t *testing.T) {
	lib := map[string]string{"alice/skills/tools/pdf/SKILL.md": "---\nname: pdf\ndescription: Merge PDF files with tools.\n---\nMerge.\n"}
	for k, v := range e2eLibrary {
		lib[k] = v
	}
	addr := startServerWith(t, lib)
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}

	// Two pdf folders: flat is refused before anything is written.
	dir := filepath.Join(t.TempDir(), "skills")
	r := runCtl(t, env, "pull", "--all", dir)
	if r.code != exitUsage || !strings.Contains(r.stderr, "/skills/docs/pdf and /skills/tools/pdf would both be") {
		t.Fatalf("flat collision: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused pull created %s: %v", dir, err)
	}

	rep := pullJSON(t, env, "pull", "--all", "--layout", "categories", dir)
	if got := keysOf(tree(t, dir)); got != "data/csv/SKILL.md,docs/pdf/SKILL.md,docs/pdf/references/forms.md,docs/pdf/scripts/extract.py,notes/SKILL.md,tools/pdf/SKILL.md" || rep.Exports != 4 {
		t.Errorf("categories layout: %s (%d exports)", got, rep.Exports)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"category", []string{"--category", "docs"}, "pdf/SKILL.md,pdf/references/forms.md,pdf/scripts/extract.py"},
		{"flat skills", []string{"--category", ""}, "notes/SKILL.md"},
		{"scope", []string{"--scope", "data-only"}, "csv/SKILL.md"},
		{"shared layer", []string{"--layer", "shared"}, "csv/SKILL.md"},
		{"user layer", []string{"--layer", "user", "--layout", "categories"}, "docs/pdf/SKILL.md,docs/pdf/references/forms.md,docs/pdf/scripts/extract.py,notes/SKILL.md,tools/pdf/SKILL.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "scope" {
				mustRun(t, env, "scope", "set", "data-only", "--include-category", "data")
			}
			dir := filepath.Join(t.TempDir(), "skills")
			mustRun(t, env, append([]string{"pull", dir}, tc.args...)...)
			if got := keysOf(tree(t, dir)); got != tc.want {
				t.Errorf("pulled %s, want %s", got, tc.want)
			}
			// sync repeats the recorded selection: nothing to do.
			if rep := pullJSON(t, env, "sync", dir); rep.Exports != 0 || len(rep.Removed) != 0 {
				t.Errorf("sync of the same selection: %+v", rep)
			}
		})
	}

	// sync refuses to remove what another server's pull wrote.
	other := filepath.Join(t.TempDir(), "skills")
	mustRun(t, env, "pull", "--layer", "shared", other)
	b, _ := os.ReadFile(filepath.Join(other, lockName))
	os.WriteFile(filepath.Join(other, lockName), bytes.Replace(b, []byte(addr), []byte("elsewhere:7070"), 1), 0o644)
	if r := runCtl(t, env, "sync", other); r.code != exitUsage || !strings.Contains(r.stderr, "written by a pull from elsewhere:7070") {
		t.Errorf("sync of another server's folder: exit %d\n%s", r.code, r.stderr)
	}

	if r := runCtl(t, env, "pull", "pdf"); r.code != exitUsage {
		t.Errorf("pull NAME without DIR: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCtl(t, env, "pull", "--all", "--library", "shared", dir); r.code != exitUsage || !strings.Contains(r.stderr, "--layer") {
		t.Errorf("--library on a set pull: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCtl(t, env, "pull", "--all", "--layout", "tree", dir); r.code != exitUsage {
		t.Errorf("an unknown layout: exit %d\n%s", r.code, r.stderr)
	}
}

// publicFolder is a public skill's files as its package holds them.
type publicFolder map[string]publicFile

type publicFile struct {
	data []byte
	mode fs.FileMode // 0644 or 0755: executable or not, as git records it
}

// publicLibrary reads the 17 public anthropics/skills from the packages
// test/selection/registry.json pins (downloaded once into the selection
// cache, verified by sha256, never committed), with their archives' modes.
func publicLibrary(t *testing.T) map[string]publicFolder {
	t.Helper()
	l, err := corpus.ReadList("../../test/selection/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]corpus.Source{}
	for _, s := range l.TargetSources {
		sources[s.ID] = s
	}
	out := map[string]publicFolder{}
	for _, target := range l.Targets {
		src := sources[target.Source]
		file, err := corpus.Fetch(t.Context(), "", src)
		if err != nil {
			t.Fatal(err)
		}
		prefix := path.Dir(target.Path) + "/"
		skill := publicFolder{}
		add := func(name string, mode fs.FileMode, r io.Reader) {
			rel, ok := strings.CutPrefix(name, prefix)
			if !ok || rel == "" {
				return
			}
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			m := fs.FileMode(0o644)
			if mode&0o111 != 0 {
				m = 0o755
			}
			skill[rel] = publicFile{b, m}
		}
		switch corpus.ArchiveKind(src.URL) {
		case "zip":
			zr, err := zip.OpenReader(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				if !f.Mode().IsRegular() {
					continue
				}
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				add(f.Name, f.Mode(), rc)
				rc.Close()
			}
			zr.Close()
		default:
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			gz, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(gz)
			for {
				h, err := tr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if h.Typeflag == tar.TypeReg {
					add(h.Name, fs.FileMode(h.Mode), tr)
				}
			}
		}
		if _, ok := skill["SKILL.md"]; !ok {
			t.Fatalf("%s: no SKILL.md under %s", target.Name, prefix)
		}
		out[target.Name] = skill
	}
	if len(out) != 17 {
		t.Fatalf("%d public skills, want 17", len(out))
	}
	return out
}

// TestPullPublicLibrary: the 17 public anthropics/skills, pushed with
// skillctl push from their packages' folders (with the packages' modes),
// come back from a flat pull byte for byte, file for file, and with the
// packages' modes; and each pulled folder whose package matches a commit
// of anthropics/skills has that commit's git tree id (git-trees.json): it
// is, mode for mode, what a git checkout of the skill holds.
func TestPullPublicLibrary(t *testing.T) {
	public := publicLibrary(t)
	addr := startServerWith(t, map[string]string{})
	env := map[string]string{"SKILLCTL_TARGET": addr, "SKILLCTL_USER": "alice"}
	src := t.TempDir()
	for name, files := range public {
		for rel, f := range files {
			p := filepath.Join(src, name, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.data, f.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, f.mode); err != nil {
				t.Fatal(err)
			}
		}
		mustRun(t, env, "push", filepath.Join(src, name), "-q")
	}

	dir := filepath.Join(t.TempDir(), "skills")
	rep := pullJSON(t, env, "pull", "--all", dir)
	if len(rep.Fetched) != 17 || rep.Exports != 17 || len(rep.Skipped) != 0 {
		t.Fatalf("pull of the public library: %d fetched, %d exports, skipped %v", len(rep.Fetched), rep.Exports, rep.Skipped)
	}
	got := tree(t, dir)
	want := 0
	for name, files := range public {
		for rel, f := range files {
			want++
			g, ok := got[name+"/"+rel]
			if !ok {
				t.Errorf("%s/%s was not pulled", name, rel)
				continue
			}
			mode, data, _ := strings.Cut(g, " ")
			if data != string(f.data) {
				t.Errorf("%s/%s differs from the package's", name, rel)
			}
			if mode != fmt.Sprintf("%04o", f.mode) {
				t.Errorf("%s/%s: mode %s, the package's %04o", name, rel, mode, f.mode)
			}
		}
	}
	if len(got) != want {
		t.Errorf("pulled %d files, the packages hold %d", len(got), want)
	}
	checkGitTrees(t, dir, public)
	if rep := pullJSON(t, env, "sync", dir); rep.Exports != 0 || len(rep.Unchanged) != 17 {
		t.Errorf("sync of an unchanged public library: %+v", rep)
	}
}

// TestReadLockRefusesForeignFolders: the lockfile decides what sync
// removes, so one naming a folder no pull writes is refused.
func TestReadLockRefusesForeignFolders(t *testing.T) {
	for _, tc := range []struct {
		name, folder, file string
		ok                 bool
	}{
		{"flat", "pdf", "SKILL.md", true},
		{"category", "docs/pdf", "scripts/x.py", true},
		{"parent", "..", "SKILL.md", false},
		{"escape", "../home", "SKILL.md", false},
		{"absolute", "/etc", "SKILL.md", false},
		{"deep", "a/b/c", "SKILL.md", false},
		{"hidden", ".git", "SKILL.md", false},
		{"the lockfile", ".skillsvc.lock", "SKILL.md", false},
		{"empty", "", "SKILL.md", false},
		{"file escape", "pdf", "../x", false},
		{"absolute file", "pdf", "/x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := &lockFile{Version: 1, Skills: map[string]*lockedSkill{tc.folder: {Path: "/skills/x", Files: map[string]lockedFile{tc.file: {}}}}}
			if err := writeLock(dir, l); err != nil {
				t.Fatal(err)
			}
			_, err := readLock(dir)
			if (err == nil) != tc.ok {
				t.Errorf("readLock = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestPullHelp: the built binary's help says what pull and sync do, and no
// longer that files keep their executable bit.
func TestPullHelp(t *testing.T) {
	bin, err := skillctlBin()
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"pull", "sync"} {
		out, err := exec.Command(bin, cmd, "--help").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{".skillsvc.lock", "--layout", "flat", "categories", ".claude/skills", "sha256", "mode of its tar entry", "--dry-run"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s --help lacks %q", cmd, want)
			}
		}
		if strings.Contains(string(out), "keep their executable bit") {
			t.Errorf("%s --help still says files keep their executable bit", cmd)
		}
	}
}

// TestVerifyStaged: an unpacked skill replaces a folder only when it holds
// exactly its manifest's files, byte for byte.
func TestVerifyStaged(t *testing.T) {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	skill := &skillsvcv1.SkillSummary{Path: "/skills/docs/pdf", ManifestDigest: "sha256:x", Manifest: &skillsvcv1.SkillManifest{Files: []*skillsvcv1.ManifestFile{
		{Path: "/skills/docs/pdf/SKILL.md", Size: 5, Sha256: sum("skill")},
		{Path: "/skills/docs/pdf/scripts/run.sh", Size: 4, Sha256: sum("echo")},
	}}}
	files, err := manifestByFile(skill)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // "" = verified
	}{
		{"exact", map[string]string{"SKILL.md": "skill", "scripts/run.sh": "echo"}, ""},
		{"changed", map[string]string{"SKILL.md": "skilL", "scripts/run.sh": "echo"}, "SKILL.md differs from the manifest"},
		{"longer", map[string]string{"SKILL.md": "skill!", "scripts/run.sh": "echo"}, "SKILL.md differs from the manifest"},
		{"extra", map[string]string{"SKILL.md": "skill", "scripts/run.sh": "echo", "x": ""}, "holds x, which the manifest does not list"},
		{"missing", map[string]string{"SKILL.md": "skill"}, "lacks scripts/run.sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSkill(t, "pdf", tc.files)
			os.Chmod(filepath.Join(dir, "scripts", "run.sh"), 0o755)
			locked, err := verifyStaged(dir, skill, files)
			if tc.want == "" {
				if err != nil || locked.Files["scripts/run.sh"].Mode != "0755" || locked.Files["SKILL.md"] != (lockedFile{5, sum("skill"), "0644"}) {
					t.Errorf("verifyStaged = %+v, %v", locked, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("verifyStaged = %v, want %q", err, tc.want)
			}
		})
	}
}

// checkGitTrees compares each pulled skill folder's git tree id with the
// one test/selection/git-trees.json records for the anthropics/skills
// commit holding the package's folder (written by git_trees.py from a
// clone: CI reaches registries, not GitHub). A skill whose package matches
// no commit is listed there with its reason and checked against the
// package only (above).
func checkGitTrees(t *testing.T, dir string, public map[string]publicFolder) {
	t.Helper()
	b, err := os.ReadFile("../../test/selection/git-trees.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Skills map[string]struct {
			Commit     *string  `json:"commit"`
			Tree       string   `json:"tree"`
			Executable []string `json:"executable"`
			Why        string   `json:"why"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	matched := 0
	for name := range public {
		r, ok := ref.Skills[name]
		switch {
		case !ok:
			t.Errorf("%s: not in git-trees.json (run test/selection/git_trees.py)", name)
		case r.Commit == nil:
			t.Logf("%s: no anthropics/skills commit holds its package's folder: %s", name, r.Why)
		default:
			matched++
			if got := gitTreeID(t, filepath.Join(dir, name)); got != r.Tree {
				t.Errorf("%s: pulled folder is git tree %s, anthropics/skills@%.12s's skills/%s is %s", name, got, *r.Commit, name, r.Tree)
			}
		}
	}
	// 16 of the 17 packages match a commit; a new pin that matches fewer
	// must be looked at, not silently checked less.
	if matched < 16 {
		t.Errorf("%d skills checked against a git tree, want at least 16", matched)
	}
}

// gitTreeID is the object id git gives the tree of dir's files: names,
// contents and the executable bit (100755 or 100644), so equal ids mean
// a checkout of that tree writes exactly these files with these modes.
func gitTreeID(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct{ mode, name, key, id string }
	var list []entry
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			// git orders a tree's entries by name, a subtree's as name + "/".
			list = append(list, entry{"40000", e.Name(), e.Name() + "/", gitTreeID(t, p)})
		default:
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			mode := "100644"
			if info.Mode()&0o111 != 0 {
				mode = "100755"
			}
			list = append(list, entry{mode, e.Name(), e.Name(), gitObjectID("blob", data)})
		}
	}
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	var buf bytes.Buffer
	for _, e := range list {
		id, _ := hex.DecodeString(e.id)
		fmt.Fprintf(&buf, "%s %s\x00", e.mode, e.name)
		buf.Write(id)
	}
	return gitObjectID("tree", buf.Bytes())
}

// gitObjectID is git's SHA-1 object id of an object of kind holding data.
func gitObjectID(kind string, data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
