package corpus

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Three small real packages from the registries (about 5.4 MB): an npm
// tarball holding one skill twice, a PyPI wheel (zip) and a PyPI sdist
// whose four document skills carry Anthropic's proprietary licence, with
// one of the sdist's skills as a target.
func smallList() List {
	fastskills := Source{Ecosystem: "pypi", Name: "fastskills", Version: "0.1.4",
		URL:    "https://files.pythonhosted.org/packages/c6/16/5310ad06a1037923c8867d491ca3f013645bbacbecb2768ec9958c55e82b/fastskills-0.1.4.tar.gz",
		SHA256: "91b8366786fa133302d35144d2d72de111bba94a40879c5a0b2902aedd04cc29", License: "MIT", Size: 4751128}
	target := fastskills
	target.ID = "targets-fastskills"
	fastskills.ID = "fastskills"
	fastskills.Skills = []string{"fastskills-0.1.4/skills/*/SKILL.md"}
	return List{
		Sources: []Source{
			{ID: "gekkocompany-orchestra", Ecosystem: "npm", Name: "@gekkocompany/orchestra", Version: "0.3.22",
				URL:    "https://registry.npmjs.org/@gekkocompany/orchestra/-/orchestra-0.3.22.tgz",
				SHA256: "88904169980c5cdb6ad3e1cc7d8604dee58fb23c207e403545ec733cc1cddca9", License: "MIT", Size: 6769,
				Skills: []string{"package/dist/skills/orchestra/*/SKILL.md", "package/skills/*/SKILL.md"}},
			{ID: "claude-skills", Ecosystem: "pypi", Name: "claude-skills", Version: "0.0.1",
				URL:    "https://files.pythonhosted.org/packages/56/f7/fde1202fc84df6a405b81de98c1ccc1e8562e1450f9937a58d8a32130df8/claude_skills-0.0.1-py3-none-any.whl",
				SHA256: "79f19ebaf30b14aff2a31f98225723064d7704b90713cd719fe0423493183d14", License: "MIT", Size: 681683,
				Skills: []string{"claude_skills/skills/**/SKILL.md"}},
			fastskills,
		},
		Targets:       []Target{{Name: "algorithmic-art", Source: "targets-fastskills", Path: "fastskills-0.1.4/skills/algorithmic-art/SKILL.md"}},
		TargetSources: []Source{target},
	}
}

// Load on real registry packages: each downloaded once and verified, npm
// tarballs, wheels and sdists read, byte-identical copies (within a package
// and of a target) taken once, the proprietary document skills left out,
// every skill named, licensed and with its folder's files, in list order;
// a second Load reads the cache only and returns the same corpus.
func TestLoadFromRegistries(t *testing.T) {
	l := smallList()
	o := Options{CacheDir: DefaultCacheDir()}
	c, err := Load(t.Context(), l, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != 1 || c.Targets[0].Name != "algorithmic-art" || !bytes.Contains(c.Targets[0].Text, []byte("name: algorithmic-art")) {
		t.Fatalf("targets: %+v", c.Targets)
	}
	count := map[string]int{}
	for _, s := range c.Skills {
		count[s.Source]++
		if s.Name == "" || s.License == "" || !strings.HasPrefix(s.Dir, s.Source+"/") || len(s.Text) > MaxSkillBytes {
			t.Errorf("%s: name %q, licence %q, dir %q, %d bytes", s.Path, s.Name, s.License, s.Dir, len(s.Text))
		}
		switch s.Folder() {
		case "docx", "pdf", "pptx", "xlsx":
			if s.Source == "fastskills" {
				t.Errorf("%s: a proprietary skill was taken", s.Path)
			}
		case "algorithmic-art":
			if s.Source == "fastskills" {
				t.Errorf("%s: the target's byte-identical copy was taken", s.Path)
			}
		}
	}
	// orchestra ships its one skill twice, byte for byte; claude-skills
	// has 28; fastskills 18, less 4 proprietary and the target's copy.
	if count["gekkocompany-orchestra"] != 1 || count["claude-skills"] != 28 || count["fastskills"] != 13 {
		t.Errorf("skills per source %v, want orchestra 1, claude-skills 28, fastskills 13", count)
	}
	if c.Proprietary != 4 || c.Copies < 2 {
		t.Errorf("%d proprietary, %d copies left out: want 4 and at least 2", c.Proprietary, c.Copies)
	}
	var withFiles bool
	for _, s := range c.Skills {
		if s.Dir == "fastskills/mcp-builder" {
			withFiles = len(s.Files) > 0
		}
	}
	if !withFiles {
		t.Error("fastskills/mcp-builder: its folder's files are not listed")
	}

	again, err := Load(t.Context(), l, o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Downloaded != 0 {
		t.Errorf("the second Load downloaded %d bytes, want the cache", again.Downloaded)
	}
	if len(again.Skills) != len(c.Skills) {
		t.Fatalf("second Load: %d skills, first %d", len(again.Skills), len(c.Skills))
	}
	for i := range c.Skills {
		if again.Skills[i].Dir != c.Skills[i].Dir || !bytes.Equal(again.Skills[i].Text, c.Skills[i].Text) {
			t.Fatalf("skill %d: %s then %s: the order is not stable", i, c.Skills[i].Dir, again.Skills[i].Dir)
		}
	}

	first, err := Load(t.Context(), l, Options{CacheDir: o.CacheDir, Skills: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Skills) != 5 || first.Skills[4].Dir != c.Skills[4].Dir {
		t.Errorf("Skills: 5 gave %d skills", len(first.Skills))
	}
}

// A fake registry over TLS serving archives built here.
type registry struct {
	srv      *httptest.Server
	files    map[string][]byte
	requests atomic.Int64
	failNext atomic.Int64 // requests to answer 503 first
}

func newRegistry(t *testing.T) *registry {
	r := &registry{files: map[string][]byte{}}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if r.failNext.Add(-1) >= 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		data, ok := r.files[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// source serves data at name and returns it pinned.
func (r *registry) source(id, name string, data []byte) Source {
	r.files["/"+name] = data
	sum := sha256.Sum256(data)
	return Source{ID: id, Ecosystem: "npm", Name: id, Version: "1.0.0", URL: r.srv.URL + "/" + name,
		SHA256: hex.EncodeToString(sum[:]), License: "MIT", Size: int64(len(data)), Skills: []string{"package/**/SKILL.md"}}
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\n" + strings.Repeat("Do the task step by step, carefully. ", 6) + "\n"
}

func tgz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range sortedKeys(files) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[name]))
	}
	zw.Close()
	return buf.Bytes()
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// What the loader refuses or leaves out, on archives built here: a body
// that is not the pinned one (no retry: it would not change), a cached
// file that went bad (downloaded again), a busy registry (retried once),
// skills without frontmatter, stubs, test fixtures, proprietary folders,
// and the rest of a source past Options.Skills never downloaded.
func TestLoadRefusesAndLeavesOut(t *testing.T) {
	retryDelay = time.Millisecond
	t.Cleanup(func() { retryDelay = 2 * time.Second })
	reg := newRegistry(t)
	good := reg.source("good", "good.tgz", tgz(t, map[string]string{
		"package/skills/alpha/SKILL.md":          skillMD("alpha", "Sort invoices by due date."),
		"package/skills/alpha/scripts/run.py":    "print(1)",
		"package/skills/beta/SKILL.md":           skillMD("beta", "Plan a garden."),
		"package/skills/beta-copy/SKILL.md":      skillMD("beta", "Plan a garden."),
		"package/skills/nofm/SKILL.md":           "# no frontmatter\n" + strings.Repeat("text ", 50),
		"package/skills/stub/SKILL.md":           "---\nname: stub\ndescription: s\n---\n",
		"package/tests/fixtures/x/SKILL.md":      skillMD("fixture", "A test's fixture."),
		"package/skills/closed/SKILL.md":         skillMD("closed", "Edit documents."),
		"package/skills/closed/LICENSE.txt":      "© 2025 Example Corp. All rights reserved.\nUse is governed by your agreement.",
		"package/skills/bsd/SKILL.md":            skillMD("bsd", "Parse logs."),
		"package/skills/bsd/LICENSE":             "Copyright (c) 2020. All rights reserved.\nRedistribution and use in source and binary forms are permitted.",
		"package/skills/alpha/references/doc.md": "notes",
	}))
	wheel := reg.source("wheel", "wheel-1.0-py3-none-any.whl", zipOf(t, map[string]string{
		"wheel/skills/gamma/SKILL.md": skillMD("gamma", "Tune a guitar."),
		"wheel/skills/beta/SKILL.md":  skillMD("beta", "Plan a garden."),
	}))
	wheel.Skills = []string{"wheel/skills/*/SKILL.md"}
	dir := t.TempDir()
	o := Options{CacheDir: dir, Client: reg.srv.Client(), Concurrency: 1}

	c, err := Load(t.Context(), List{Sources: []Source{good, wheel}}, o)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, s := range c.Skills {
		dirs = append(dirs, s.Dir)
	}
	// in path order: beta-copy/ sorts before beta/
	want := []string{"good/alpha", "good/beta-copy", "good/bsd", "wheel/gamma"}
	if strings.Join(dirs, " ") != strings.Join(want, " ") {
		t.Errorf("skills %v, want %v", dirs, want)
	}
	if c.Copies != 2 || c.Proprietary != 1 || c.Refused != 2 {
		t.Errorf("copies %d, proprietary %d, refused %d: want 2, 1, 2", c.Copies, c.Proprietary, c.Refused)
	}
	if f := c.Skills[0].Files; strings.Join(f, " ") != "references/doc.md scripts/run.py" {
		t.Errorf("alpha's files %v", f)
	}

	t.Run("a body other than the pinned one", func(t *testing.T) {
		bad := good
		bad.SHA256 = strings.Repeat("0", 64)
		before := reg.requests.Load()
		_, err := Load(t.Context(), List{Sources: []Source{bad}}, Options{CacheDir: t.TempDir(), Client: reg.srv.Client()})
		if !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), bad.URL) {
			t.Errorf("err = %v, want ErrDigest naming the URL", err)
		}
		if n := reg.requests.Load() - before; n != 1 {
			t.Errorf("%d requests, want 1: a wrong body is not retried", n)
		}
	})
	t.Run("a cached archive that went bad", func(t *testing.T) {
		if err := os.WriteFile(cached(dir, good), []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(t.Context(), List{Sources: []Source{good}}, o)
		if err != nil || len(c.Skills) != 3 || c.Downloaded != good.Size {
			t.Errorf("err %v, %d skills, %d bytes downloaded: want the archive fetched again", err, len(c.Skills), c.Downloaded)
		}
	})
	t.Run("a busy registry", func(t *testing.T) {
		reg.failNext.Store(1)
		before := reg.requests.Load()
		c, err := Load(t.Context(), List{Sources: []Source{wheel}}, Options{CacheDir: t.TempDir(), Client: reg.srv.Client()})
		if err != nil || len(c.Skills) != 2 {
			t.Fatalf("err %v, %d skills: want the retry to succeed", err, len(c.Skills))
		}
		if n := reg.requests.Load() - before; n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("a registry that stays down", func(t *testing.T) {
		reg.failNext.Store(2)
		_, err := Load(t.Context(), List{Sources: []Source{wheel}}, Options{CacheDir: t.TempDir(), Client: reg.srv.Client()})
		if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "wheel@1.0.0") {
			t.Errorf("err = %v, want the status and the package", err)
		}
	})
	t.Run("a truncated archive", func(t *testing.T) {
		data := tgz(t, map[string]string{"package/skills/a/SKILL.md": skillMD("a", "x")})
		broken := reg.source("broken", "broken.tgz", data[:len(data)/2])
		_, err := Load(t.Context(), List{Sources: []Source{broken}}, Options{CacheDir: t.TempDir(), Client: reg.srv.Client()})
		if err == nil || !strings.Contains(err.Error(), "broken@1.0.0") {
			t.Errorf("err = %v, want a read error naming the package", err)
		}
	})
	t.Run("Skills stops the downloads", func(t *testing.T) {
		before := reg.requests.Load()
		c, err := Load(t.Context(), List{Sources: []Source{good, wheel}}, Options{CacheDir: t.TempDir(), Client: reg.srv.Client(), Concurrency: 1, Skills: 2})
		if err != nil || len(c.Skills) != 2 {
			t.Fatalf("err %v, %d skills", err, len(c.Skills))
		}
		if n := reg.requests.Load() - before; n != 1 {
			t.Errorf("%d requests, want 1: the second source is not needed", n)
		}
	})
	t.Run("over the total bound", func(t *testing.T) {
		_, err := Load(t.Context(), List{Sources: []Source{good, wheel}}, Options{CacheDir: t.TempDir(), Client: reg.srv.Client(), MaxTotalBytes: good.Size})
		if err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("err = %v, want the bound refused before any download", err)
		}
	})
}

func TestValidate(t *testing.T) {
	ok := Source{ID: "a", Ecosystem: "npm", Name: "a", Version: "1", URL: "https://x/a.tgz", SHA256: strings.Repeat("a", 64), Size: 10, Skills: []string{"package/**/SKILL.md"}}
	for _, c := range []struct {
		name string
		edit func(*List)
		want string
	}{
		{"valid", func(*List) {}, ""},
		{"http", func(l *List) { l.Sources[0].URL = "http://x/a.tgz" }, "not https"},
		{"unknown archive", func(l *List) { l.Sources[0].URL = "https://x/a.rar" }, "not a .tgz"},
		{"bad digest", func(l *List) { l.Sources[0].SHA256 = "abc" }, "sha256"},
		{"too large", func(l *List) { l.Sources[0].Size = MaxArchiveBytes + 1 }, "size"},
		{"duplicate id", func(l *List) { l.Sources = append(l.Sources, l.Sources[0]) }, "twice"},
		{"glob", func(l *List) { l.Sources[0].Skills = []string{"package/README.md"} }, "SKILL.md"},
		{"target without source", func(l *List) { l.Targets = []Target{{Name: "t", Source: "b", Path: "x/SKILL.md"}} }, "no source"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := List{Sources: []Source{ok}}
			c.edit(&l)
			err := l.Validate()
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		glob, name string
		want       bool
	}{
		{"package/**/SKILL.md", "package/SKILL.md", true},
		{"package/**/SKILL.md", "package/a/b/c/SKILL.md", true},
		{"package/skills/*/SKILL.md", "package/skills/a/SKILL.md", true},
		{"package/skills/*/SKILL.md", "package/skills/a/b/SKILL.md", false},
		{"package/**/SKILL.md", "other/a/SKILL.md", false},
		{"x-1.0/skills/**/SKILL.md", "x-1.0/skills/a/SKILL.md", true},
	} {
		if got := matchGlob(c.glob, c.name); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v", c.glob, c.name, got)
		}
	}
}

// Folders are unique within their source and the same from run to run:
// queries.json names its targets by them.
func TestUniqueDir(t *testing.T) {
	used := map[string]bool{}
	for _, c := range []struct{ dir, want string }{
		{"skills/PDF Tools", "src/pdf-tools"},
		{"other/pdf-tools", "src/pdf-tools-2"},
		{"a/b/pdf_tools", "src/pdf-tools-3"},
	} {
		if got := uniqueDir(used, "src", c.dir); got != c.want {
			t.Errorf("uniqueDir(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}
