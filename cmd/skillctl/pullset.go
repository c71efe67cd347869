package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillrun"
)

// A set pull copies many skills into one folder (a host's skills folder:
// .claude/skills, ~/.agents/skills, ~/.codex/skills) and keeps a lockfile
// there naming each folder it wrote with the manifest it wrote from, so the
// next pull fetches only what changed and sync removes only its own
// folders.

// lockName is the lockfile in the target folder; hosts skip dot files.
const lockName = ".skillsvc.lock"

// maxLockBytes bounds the lockfile read: far above a large library's.
const maxLockBytes = 64 << 20

// Layouts of a set pull.
const (
	layoutFlat       = "flat"       // <dir>/<skill>/...
	layoutCategories = "categories" // <dir>/<category>/<skill>/...
)

// lockFile is .skillsvc.lock.
type lockFile struct {
	Version int `json:"version"`
	// Server is the target the skills came from; sync refuses to remove
	// folders another server's pull wrote (unless --force).
	Server        string    `json:"server"`
	Selection     selection `json:"selection"`
	Layout        string    `json:"layout"`
	LibraryDigest string    `json:"libraryDigest,omitempty"`
	// Skills maps each folder written, relative to the target folder
	// ("pdf", or "docs/pdf" in the categories layout), to what is there.
	Skills map[string]*lockedSkill `json:"skills"`
}

type lockedSkill struct {
	Path           string                `json:"path"` // the skill's path on the server, /skills/...
	Layer          string                `json:"layer,omitempty"`
	ManifestDigest string                `json:"manifestDigest"`
	Files          map[string]lockedFile `json:"files"`
}

type lockedFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Mode   string `json:"mode"` // octal, "0644" or "0755": the export's tar mode
}

// selection is which skills of the caller's catalog a set pull takes.
type selection struct {
	All      bool    `json:"all,omitempty"`
	Category *string `json:"category,omitempty"` // "" is the flat skills
	Layer    string  `json:"layer,omitempty"`    // user, team, team:ID or shared
	Scope    string  `json:"scope,omitempty"`
	Harness  string  `json:"harness,omitempty"`
}

func (s selection) empty() bool {
	return !s.All && s.Category == nil && s.Layer == "" && s.Scope == ""
}

type setOptions struct {
	sel      selection
	layout   string
	sync     bool
	force    bool
	dryRun   bool
	maxBytes int64
	wait     time.Duration // for another pull into the same folder
}

// pullReport is what a set pull did; --json prints it.
type pullReport struct {
	Dir           string          `json:"dir"`
	Layout        string          `json:"layout"`
	LibraryDigest string          `json:"libraryDigest"`
	DryRun        bool            `json:"dryRun,omitempty"`
	Fetched       []fetchedReport `json:"fetched"`
	Unchanged     []string        `json:"unchanged"`
	Removed       []string        `json:"removed"`
	// Kept: folders edited since pulled whose skill did not change: left
	// as they are.
	Kept []string `json:"kept"`
	// Skipped: skills over the manifest limits, which cannot be verified.
	Skipped []string `json:"skipped"`
	// Exports is the ExportSkill calls made, BytesFetched the archive
	// bytes they returned.
	Exports      int   `json:"exports"`
	BytesFetched int64 `json:"bytesFetched"`
}

type fetchedReport struct {
	Folder string `json:"folder"`
	Path   string `json:"path"`
	Digest string `json:"manifestDigest"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
}

// wanted is one selected skill and where it goes.
type wanted struct {
	folder string // relative to the target folder, slash-separated
	skill  *skillsvcv1.SkillSummary
}

func validLayout(l string) error {
	if l != layoutFlat && l != layoutCategories {
		return fmt.Errorf("--layout %q: want flat or categories", l)
	}
	return nil
}

// validLayer checks --layer: user, team, team:ID or shared.
func validLayer(l string) error {
	switch team, isTeam := strings.CutPrefix(l, "team:"); {
	case l == "", l == "user", l == "shared", l == "team", isTeam && team != "":
		return nil
	}
	return fmt.Errorf(`--layer %q: want user, team, team:ID or shared`, l)
}

func layerMatches(want, layer string) bool {
	switch want {
	case "":
		return true
	case "team":
		return strings.HasPrefix(layer, "team:")
	}
	return want == layer
}

// folderOf is where the skill goes in the layout: its folder's name (flat),
// or its path under /skills (categories).
func folderOf(s *skillsvcv1.SkillSummary, layout string) (string, error) {
	rel, ok := strings.CutPrefix(s.GetPath(), "/skills/")
	if !ok || !safeFolder(rel) {
		return "", fmt.Errorf("skill %s: unexpected path %q", s.GetName(), s.GetPath())
	}
	if layout == layoutFlat {
		return path.Base(rel), nil
	}
	return rel, nil
}

// safeFolder: a relative, canonical path of at most two names, none empty,
// "." or "..", none starting with "." (the lockfile and temporary folders).
func safeFolder(rel string) bool {
	parts := strings.Split(rel, "/")
	if rel == "" || len(parts) > 2 || strings.Contains(rel, "\\") {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.HasPrefix(p, ".") {
			return false
		}
	}
	return true
}

func readLock(dir string) (*lockFile, error) {
	b, err := readBounded(filepath.Join(dir, lockName), maxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l lockFile
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, lockName), err)
	}
	if l.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, want 1", filepath.Join(dir, lockName), l.Version)
	}
	// The lockfile decides what sync deletes: a folder it names must be
	// one a pull could have written, under dir.
	for folder, s := range l.Skills {
		if !safeFolder(folder) || s == nil {
			return nil, fmt.Errorf("%s names %q, which no pull writes", filepath.Join(dir, lockName), folder)
		}
		for rel := range s.Files {
			if _, _, err := entrySafe(rel); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", filepath.Join(dir, lockName), folder, err)
			}
		}
	}
	return &l, nil
}

// entrySafe checks a file path relative to a skill folder.
func entrySafe(rel string) (string, string, error) {
	clean := path.Clean(rel)
	if rel == "" || clean != rel || path.IsAbs(rel) || strings.Contains(rel, "\\") || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("unsafe file path %q", rel)
	}
	return path.Dir(rel), path.Base(rel), nil
}

// writeLock replaces the lockfile atomically.
func writeLock(dir string, l *lockFile) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".skillsvc-lock-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, lockName))
}

// folderState compares a folder with what the lockfile says was written:
// "missing", "intact", or "modified" (a file added, removed or changed).
// full hashes every file; otherwise sizes and modes are compared.
func folderState(dir string, s *lockedSkill, full bool) (string, error) {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing", nil
	}
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "modified", nil
	}
	seen := 0
	modified := false
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || modified {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, ok := s.Files[filepath.ToSlash(rel)]
		info, ierr := d.Info()
		if !ok || ierr != nil || !info.Mode().IsRegular() || info.Size() != f.Size || fmt.Sprintf("%04o", info.Mode().Perm()) != f.Mode {
			modified = true
			return nil
		}
		if full {
			sum, _, err := fileSHA256(p)
			if err != nil {
				return err
			}
			if sum != f.SHA256 {
				modified = true
				return nil
			}
		}
		seen++
		return nil
	})
	if err != nil {
		return "", err
	}
	if modified || seen != len(s.Files) {
		return "modified", nil
	}
	return "intact", nil
}

func fileSHA256(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// pullSet pulls the selected skills into dir.
func (a *app) pullSet(cmd *cobra.Command, dir string, o setOptions) error {
	if f := cmd.Flags().Lookup("library"); f != nil && f.Changed {
		return usageErr(errors.New("a set pull copies your catalog as you see it; --layer user, team, team:ID or shared takes one library's skills (--library names the library push and other writes act on)"))
	}
	if !o.sel.empty() {
		if err := errors.Join(validLayout(o.layout), validLayer(o.sel.Layer)); err != nil {
			return usageErr(err)
		}
	}
	// The lock is held from before the lockfile is read. A folder that
	// does not exist yet is planned as empty without it, nothing read
	// there (a refused pull creates nothing; another pull may be writing
	// it by now), then planned again from what is there under the lock. A
	// dry run writes nothing and takes no lock.
	_, statErr := os.Stat(dir)
	fresh := errors.Is(statErr, fs.ErrNotExist)
	if !fresh && !o.dryRun {
		unlock, err := a.lockDir(cmd.Context(), dir, o.wait)
		if err != nil {
			return err
		}
		defer unlock()
	}
	var lock *lockFile
	if !fresh {
		var err error
		if lock, err = readLock(dir); err != nil {
			return usageErr(err)
		}
	}
	if o.sel.empty() {
		if lock == nil {
			return usageErr(fmt.Errorf("%s has no %s: say what to pull (--all, --category, --layer or --scope)", dir, lockName))
		}
		o.sel = lock.Selection // sync DIR repeats the pull that wrote it
		if !cmd.Flags().Changed("layout") {
			o.layout = lock.Layout
		}
	}
	if err := validLayout(o.layout); err != nil {
		return usageErr(err)
	}
	if err := validLayer(o.sel.Layer); err != nil {
		return usageErr(err)
	}
	if o.sel.Scope != "" {
		a.viewScope = o.sel.Scope
	}
	if o.sel.Harness != "" && a.harness == "" {
		a.harness = o.sel.Harness
	}
	o.sel.Harness = a.harness
	if err := a.connect(cmd); err != nil {
		return err
	}
	req := &skillsvcv1.ListSkillsRequest{PageSize: 1000, View: skillsvcv1.SkillView_SKILL_VIEW_FULL, Scope: o.sel.Scope}
	if o.sel.Category != nil {
		req.Category = proto.String(*o.sel.Category)
	}
	list, err := a.listAll(cmd.Context(), req)
	if err != nil {
		return err
	}
	p, err := a.planPull(dir, o, lock, list, !fresh)
	if err != nil {
		return err
	}
	if o.dryRun {
		for _, f := range p.fetch {
			p.rep.Fetched = append(p.rep.Fetched, fetchedReport{Folder: f.w.folder, Path: f.w.skill.GetPath(), Digest: f.w.skill.GetManifestDigest(),
				Files: int(f.w.skill.GetManifest().GetFileCount()), Bytes: f.w.skill.GetManifest().GetTotalBytes()})
		}
		p.rep.Removed = append(p.rep.Removed, p.remove...)
		return a.printPullReport(p.rep)
	}
	if fresh {
		unlock, err := a.lockDir(cmd.Context(), dir, o.wait)
		if err != nil {
			return err
		}
		defer unlock()
		if lock, err = readLock(dir); err != nil {
			return usageErr(err)
		}
		if p, err = a.planPull(dir, o, lock, list, true); err != nil {
			return err
		}
	}
	return a.runPull(cmd.Context(), dir, o, list, p)
}

// action is one skill a pull fetches: where it goes and what the
// lockfile said of that folder, if anything.
type action struct {
	w      wanted
	locked *lockedSkill
}

// pullPlan is what a set pull will do: fetch and remove, from the
// lockfile it planned from; rep has what is left as it is.
type pullPlan struct {
	lock   *lockFile
	fetch  []action
	remove []string
	rep    *pullReport
}

// planPull decides, from the lockfile (nil: none), the listing and what
// is on disk (onDisk; else dir is taken as empty), what a pull into dir
// fetches and removes, and refuses every conflict before anything is
// written.
func (a *app) planPull(dir string, o setOptions, lock *lockFile, list *skillsvcv1.ListSkillsResponse, onDisk bool) (*pullPlan, error) {
	if lock == nil {
		lock = &lockFile{Version: 1, Skills: map[string]*lockedSkill{}}
	} else if o.sync && lock.Server != a.set.Target && !o.force {
		return nil, usageErr(fmt.Errorf("%s was written by a pull from %s, not %s: sync would remove its skills (--force to sync anyway)", filepath.Join(dir, lockName), lock.Server, a.set.Target))
	}
	if lock.Skills == nil {
		lock.Skills = map[string]*lockedSkill{}
	}
	rep := &pullReport{Dir: dir, Layout: o.layout, LibraryDigest: list.GetLibraryDigest(), DryRun: o.dryRun,
		Fetched: []fetchedReport{}, Unchanged: []string{}, Removed: []string{}, Kept: []string{}, Skipped: []string{}}

	// Plan everything, and refuse every conflict, before writing anything.
	var want []wanted
	byFolder := map[string]*skillsvcv1.SkillSummary{}
	var problems []string
	for _, s := range list.GetSkills() {
		if !layerMatches(o.sel.Layer, s.GetLayer()) {
			continue
		}
		if s.GetManifest().GetOverLimits() || s.GetManifestDigest() == "" {
			rep.Skipped = append(rep.Skipped, s.GetPath())
			fmt.Fprintf(a.stderr, "skillctl: skipped %s: over the manifest limits (%d files, %s), so its files cannot be verified; pull it alone with skillctl pull %s DIR\n",
				inert(s.GetPath()), s.GetManifest().GetFileCount(), humanBytes(s.GetManifest().GetTotalBytes()), inert(strings.TrimPrefix(s.GetPath(), "/skills/")))
			continue
		}
		folder, err := folderOf(s, o.layout)
		if err != nil {
			return nil, err
		}
		if other, dup := byFolder[folder]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s would both be %s (use --layout categories, or narrow the selection)",
				inert(other.GetPath()), inert(s.GetPath()), inert(filepath.Join(dir, folder))))
			continue
		}
		byFolder[folder] = s
		want = append(want, wanted{folder: folder, skill: s})
	}
	for folder := range byFolder {
		if parent := path.Dir(folder); parent != "." {
			if s, ok := byFolder[parent]; ok {
				problems = append(problems, fmt.Sprintf("%s would be inside %s's folder %s", inert(byFolder[folder].GetPath()), inert(s.GetPath()), inert(filepath.Join(dir, parent))))
			}
			if _, ok := lock.Skills[parent]; ok {
				problems = append(problems, fmt.Sprintf("%s would be inside %s, a skill folder an earlier pull wrote (sync it away first)", inert(byFolder[folder].GetPath()), inert(filepath.Join(dir, parent))))
			}
		}
	}

	var fetch []action
	var remove []string
	for _, w := range want {
		locked := lock.Skills[w.folder]
		abs := filepath.Join(dir, filepath.FromSlash(w.folder))
		if locked == nil {
			if _, err := os.Lstat(abs); onDisk && err == nil && !o.force {
				problems = append(problems, fmt.Sprintf("%s exists and no pull wrote it (not in %s): move it away, or --force to replace it", inert(abs), lockName))
				continue
			}
			fetch = append(fetch, action{w: w})
			continue
		}
		changed := locked.ManifestDigest != w.skill.GetManifestDigest()
		state, err := folderState(abs, locked, changed)
		if err != nil {
			return nil, err
		}
		switch {
		case state == "missing":
			fetch = append(fetch, action{w: w, locked: locked})
		case state == "modified" && !changed:
			rep.Kept = append(rep.Kept, w.folder)
		case state == "modified" && !o.force:
			problems = append(problems, fmt.Sprintf("%s was edited since it was pulled and its skill changed: move your changes away, or --force to replace them", inert(abs)))
		case changed || state == "modified":
			fetch = append(fetch, action{w: w, locked: locked})
		default:
			rep.Unchanged = append(rep.Unchanged, w.folder)
		}
	}
	if o.sync {
		for _, folder := range slices.Sorted(maps.Keys(lock.Skills)) {
			if _, ok := byFolder[folder]; ok {
				continue
			}
			abs := filepath.Join(dir, filepath.FromSlash(folder))
			state, err := folderState(abs, lock.Skills[folder], true)
			if err != nil {
				return nil, err
			}
			if state == "modified" && !o.force {
				problems = append(problems, fmt.Sprintf("%s was edited since it was pulled and its skill is gone: move it away, or --force to remove it", inert(abs)))
				continue
			}
			remove = append(remove, folder)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, usageErr(fmt.Errorf("nothing was written to %s:\n  %s", dir, strings.Join(problems, "\n  ")))
	}
	return &pullPlan{lock: lock, fetch: fetch, remove: remove, rep: rep}, nil
}

// runPull carries out a plan, the folder's lock held.
func (a *app) runPull(ctx context.Context, dir string, o setOptions, list *skillsvcv1.ListSkillsResponse, p *pullPlan) error {
	lock, rep, fetch, remove := p.lock, p.rep, p.fetch, p.remove
	lock.Server, lock.Selection, lock.Layout = a.set.Target, o.sel, o.layout
	// The digest is written only once the folder holds that state.
	lock.LibraryDigest = ""
	for _, folder := range remove {
		if err := removeFolder(dir, folder); err != nil {
			return usageErr(err)
		}
		delete(lock.Skills, folder)
		if err := writeLock(dir, lock); err != nil {
			return usageErr(err)
		}
		rep.Removed = append(rep.Removed, folder)
		if !a.quiet && !a.jsonOut {
			fmt.Fprintf(a.stdout, "removed %s\n", inert(folder))
		}
	}
	for _, f := range fetch {
		if err := ctx.Err(); err != nil {
			return err
		}
		locked, n, err := a.fetchInto(ctx, dir, f.w, o.maxBytes, rep)
		if err != nil {
			return err
		}
		lock.Skills[f.w.folder] = locked
		if err := writeLock(dir, lock); err != nil {
			return usageErr(err)
		}
		rep.Fetched = append(rep.Fetched, fetchedReport{Folder: f.w.folder, Path: f.w.skill.GetPath(), Digest: locked.ManifestDigest, Files: len(locked.Files), Bytes: n})
		if !a.quiet && !a.jsonOut {
			fmt.Fprintf(a.stdout, "pulled %s into %s (%d files, %s)\n", inert(f.w.skill.GetPath()), inert(filepath.Join(dir, f.w.folder)), len(locked.Files), humanBytes(n))
		}
	}
	lock.LibraryDigest = list.GetLibraryDigest()
	if err := writeLock(dir, lock); err != nil {
		return usageErr(err)
	}
	return a.printPullReport(rep)
}

// fetchInto exports one skill into a temporary folder in dir, verifies it
// against the listing's manifest, and puts it in place by renaming.
func (a *app) fetchInto(ctx context.Context, dir string, w wanted, maxBytes int64, rep *pullReport) (*lockedSkill, int64, error) {
	s := w.skill
	files, err := manifestByFile(s)
	if err != nil {
		return nil, 0, err
	}
	tmp, err := os.MkdirTemp(dir, ".skillsvc-pull-")
	if err != nil {
		return nil, 0, usageErr(err)
	}
	defer os.RemoveAll(tmp)
	cctx, cancel, err := a.callCtx(ctx, true)
	if err != nil {
		return nil, 0, err
	}
	defer cancel()
	stream, err := a.skills().ExportSkill(cctx, &skillsvcv1.ExportSkillRequest{Path: s.GetPath()})
	if err != nil {
		return nil, 0, err
	}
	rep.Exports++
	r := &skillrun.ExportReader{Recv: stream.Recv, OnRead: func(n int) { rep.BytesFetched += int64(n) }}
	staged := filepath.Join(tmp, "skill")
	n, _, err := skillrun.ExtractSkill(r, staged, min(maxBytes, max(s.GetManifest().GetTotalBytes(), 1)))
	if r.Err != nil {
		return nil, 0, r.Err
	}
	changedMeanwhile := "; the skill may have changed since it was listed: pull again"
	if err != nil {
		return nil, 0, fmt.Errorf("skill %s: %v%s", inert(s.GetPath()), err, changedMeanwhile)
	}
	locked, err := verifyStaged(staged, s, files)
	if err != nil {
		return nil, 0, fmt.Errorf("skill %s: %v%s", inert(s.GetPath()), err, changedMeanwhile)
	}
	target := filepath.Join(dir, filepath.FromSlash(w.folder))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return nil, 0, usageErr(err)
	}
	// Move the old folder aside, then the new one in: a reader sees one
	// or the other (for an instant, neither), never a mix.
	old := filepath.Join(tmp, "old")
	if err := os.Rename(target, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, usageErr(err)
	}
	if err := os.Rename(staged, target); err != nil {
		_ = os.Rename(old, target)
		return nil, 0, usageErr(err)
	}
	return locked, n, nil
}

// manifestByFile maps each file of the skill's manifest, relative to its
// folder, to its entry.
func manifestByFile(s *skillsvcv1.SkillSummary) (map[string]*skillsvcv1.ManifestFile, error) {
	files := map[string]*skillsvcv1.ManifestFile{}
	prefix := strings.TrimSuffix(s.GetPath(), "/") + "/"
	for _, f := range s.GetManifest().GetFiles() {
		rel, ok := strings.CutPrefix(f.GetPath(), prefix)
		if !ok {
			return nil, fmt.Errorf("skill %s: manifest file %q is outside %s", inert(s.GetPath()), inert(f.GetPath()), inert(s.GetPath()))
		}
		files[rel] = f
	}
	return files, nil
}

// verifyStaged checks that staged holds exactly the manifest's files, each
// with its size and sha256, and returns them as the lockfile records them,
// with the modes they were unpacked with.
func verifyStaged(staged string, s *skillsvcv1.SkillSummary, files map[string]*skillsvcv1.ManifestFile) (*lockedSkill, error) {
	locked := &lockedSkill{Path: s.GetPath(), Layer: s.GetLayer(), ManifestDigest: s.GetManifestDigest(), Files: map[string]lockedFile{}}
	err := filepath.WalkDir(staged, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(staged, p)
		rel = filepath.ToSlash(rel)
		m, ok := files[rel]
		if !ok {
			return fmt.Errorf("the export holds %s, which the manifest does not list", rel)
		}
		sum, size, err := fileSHA256(p)
		if err != nil {
			return err
		}
		if size != m.GetSize() || sum != m.GetSha256() {
			return fmt.Errorf("%s differs from the manifest (%d bytes, want %d with sha256 %s)", rel, size, m.GetSize(), m.GetSha256())
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		locked.Files[rel] = lockedFile{Size: size, SHA256: sum, Mode: fmt.Sprintf("%04o", info.Mode().Perm())}
		return nil
	})
	if err == nil && len(locked.Files) != len(files) {
		for rel := range files {
			if _, ok := locked.Files[rel]; !ok {
				err = fmt.Errorf("the export lacks %s", rel)
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return locked, nil
}

// removeFolder removes a skill folder the lockfile names, then its category
// folder if that is left empty.
func removeFolder(dir, folder string) error {
	abs := filepath.Join(dir, filepath.FromSlash(folder))
	tmp, err := os.MkdirTemp(dir, ".skillsvc-rm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Rename(abs, filepath.Join(tmp, "old")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if parent := path.Dir(folder); parent != "." {
		_ = os.Remove(filepath.Join(dir, filepath.FromSlash(parent))) // only when empty
	}
	return nil
}

func (a *app) printPullReport(rep *pullReport) error {
	for _, l := range [][]string{rep.Unchanged, rep.Removed, rep.Kept, rep.Skipped} {
		slices.Sort(l)
	}
	if a.jsonOut {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.jsonStdout, "%s\n", b)
		return err
	}
	if a.quiet {
		return nil
	}
	if rep.DryRun {
		for _, f := range rep.Fetched {
			fmt.Fprintf(a.stdout, "would pull %s into %s\n", inert(f.Path), inert(filepath.Join(rep.Dir, f.Folder)))
		}
		for _, f := range rep.Removed {
			fmt.Fprintf(a.stdout, "would remove %s\n", inert(filepath.Join(rep.Dir, f)))
		}
	}
	for _, f := range rep.Kept {
		fmt.Fprintf(a.stdout, "kept %s: edited since it was pulled (its skill did not change)\n", inert(filepath.Join(rep.Dir, f)))
	}
	verb := "pulled"
	if rep.DryRun {
		verb = "would pull"
	}
	fmt.Fprintf(a.stdout, "%s %d skills into %s (%s layout): %d unchanged, %d removed; %d exports, %s fetched\n",
		verb, len(rep.Fetched), inert(rep.Dir), rep.Layout, len(rep.Unchanged), len(rep.Removed), rep.Exports, humanBytes(rep.BytesFetched))
	return nil
}
