package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// ExtractTarget writes the target's whole folder, and only it, with the
// archive's executable bits, from a tarball or a wheel.
func TestExtractTarget(t *testing.T) {
	reg := newRegistry(t)
	files := map[string]string{
		"pkg/skills/pdf/SKILL.md":         skillMD("pdf", "Forms in PDF files."),
		"pkg/skills/pdf/scripts/run.py":   "print('run')\n",
		"pkg/skills/pdf/ref/forms.md":     "# Forms\n",
		"pkg/skills/pdf-extra/SKILL.md":   skillMD("pdf-extra", "Not this one."),
		"pkg/skills/pdf/../outside.txt":   "never written\n",
		"pkg/skills/other/scripts/run.py": "print('other')\n",
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range sortedKeys(files) {
		mode := int64(0o644)
		if filepath.Ext(name) == ".py" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	zw.Close()
	wheel := map[string]string{"w/skills/pdf/SKILL.md": files["pkg/skills/pdf/SKILL.md"], "w/skills/pdf/scripts/run.py": "print('wheel')\n"}
	l := List{
		Targets:       []Target{{Name: "pdf", Source: "pkg", Path: "pkg/skills/pdf/SKILL.md"}, {Name: "wheel-pdf", Source: "whl", Path: "w/skills/pdf/SKILL.md"}},
		TargetSources: []Source{reg.source("pkg", "pkg.tgz", buf.Bytes()), reg.source("whl", "w.whl", zipOf(t, wheel))},
	}
	o := Options{CacheDir: t.TempDir(), Client: reg.srv.Client()}

	dest := t.TempDir()
	dir, err := l.ExtractTarget(t.Context(), "pdf", dest, o)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(dest, "pdf") {
		t.Errorf("dir = %s", dir)
	}
	var got []string
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			info, _ := d.Info()
			got = append(got, rel+" "+info.Mode().Perm().String())
		}
		return nil
	})
	want := []string{"pdf/SKILL.md -rw-r--r--", "pdf/ref/forms.md -rw-r--r--", "pdf/scripts/run.py -rwxr-xr-x"}
	if !slices.Equal(got, want) {
		t.Errorf("extracted %q, want %q", got, want)
	}

	dir, err = l.ExtractTarget(t.Context(), "wheel-pdf", t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "scripts", "run.py")); err != nil || string(b) != "print('wheel')\n" {
		t.Errorf("wheel: %q %v", b, err)
	}
	// The archives came from the registry once each; a second call reads
	// the cache.
	if _, err := l.ExtractTarget(t.Context(), "pdf", t.TempDir(), o); err != nil || reg.requests.Load() != 2 {
		t.Errorf("second extract: %v, %d requests", err, reg.requests.Load())
	}
	if _, err := l.ExtractTarget(t.Context(), "nope", t.TempDir(), o); err == nil {
		t.Error("an unknown target extracted")
	}
}
