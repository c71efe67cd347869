package skillarchive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/skillarchive"
)

type entry struct {
	name, body string
	mode       int64
	typ        byte
	mod        time.Time
}

// folderExport is a tar.gz as ExportSkill's folder layout writes one.
func folderExport(t *testing.T, gzName string, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	gz.Name, gz.ModTime = gzName, time.Unix(1700000000, 0)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), ModTime: e.mod, Typeflag: typ, Uname: "someone", Uid: 1000, Format: tar.FormatPAX}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRepackRootLayoutAndDeterministic(t *testing.T) {
	long := "references/" + string(bytes.Repeat([]byte("d"), 120)) + ".md"
	files := func(mod time.Time) []entry {
		return []entry{
			{name: "pdf/SKILL.md", body: "---\nname: pdf\n---\n", mode: 0o644, mod: mod},
			{name: "pdf/" + long, body: "long\n", mode: 0o644, mod: mod},
			{name: "pdf/scripts/x.py", body: "#!/usr/bin/env python3\n", mode: 0o755, mod: mod},
		}
	}
	a := folderExport(t, "a.tar", files(time.Unix(1700000000, 0))...)
	b := folderExport(t, "", files(time.Unix(1800000000, 0))...)
	var outA, outB bytes.Buffer
	gotA, err := skillarchive.Repack(&outA, bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := skillarchive.Repack(&outB, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outA.Bytes(), outB.Bytes()) {
		t.Error("the same files at other times and under another gzip name make other bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(outA.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header: name %q time %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	want := []struct {
		name string
		mode int64
	}{{"SKILL.md", 0o644}, {long, 0o644}, {"scripts/x.py", 0o755}}
	for i, w := range want {
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != w.name || h.Mode != w.mode || !h.ModTime.Equal(time.Unix(0, 0)) || h.Uname != "" || h.Uid != 0 || h.Typeflag != tar.TypeReg {
			t.Errorf("entry %d: %+v, want %s %o at time 0 with no owner", i, h, w.name, w.mode)
		}
		body, _ := io.ReadAll(tr)
		sum := sha256.Sum256(body)
		if gotA[i].Path != w.name || gotA[i].SHA256 != hex.EncodeToString(sum[:]) || gotA[i].Mode != w.mode || gotA[i].Size != int64(len(body)) {
			t.Errorf("file %d: %+v", i, gotA[i])
		}
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("after the files: %v", err)
	}
}

func TestRepackRefusesWhatIsNotAFolderExport(t *testing.T) {
	ok := entry{name: "pdf/SKILL.md", body: "x", mode: 0o644}
	for name, entries := range map[string][]entry{
		"no SKILL.md":         {{name: "pdf/README.md", body: "x", mode: 0o644}},
		"SKILL.md not at top": {{name: "pdf/sub/SKILL.md", body: "x", mode: 0o644}},
		"two folders":         {ok, {name: "other/a.md", body: "x", mode: 0o644}},
		"no folder":           {{name: "SKILL.md", body: "x", mode: 0o644}},
		"dot-dot":             {ok, {name: "pdf/../etc/passwd", body: "x", mode: 0o644}},
		"absolute":            {ok, {name: "/pdf/a.md", body: "x", mode: 0o644}},
		"symlink":             {ok, {name: "pdf/link", mode: 0o777, typ: tar.TypeSymlink}},
		"directory":           {{name: "pdf/dir/", mode: 0o755, typ: tar.TypeDir}, ok},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := skillarchive.Repack(io.Discard, bytes.NewReader(folderExport(t, "", entries...)))
			if !errors.Is(err, skillarchive.ErrLayout) {
				t.Errorf("err %v, want ErrLayout", err)
			}
		})
	}
	t.Run("not gzip", func(t *testing.T) {
		if _, err := skillarchive.Repack(io.Discard, bytes.NewReader([]byte("plain"))); !errors.Is(err, skillarchive.ErrLayout) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("the reader's own error", func(t *testing.T) {
		boom := errors.New("export failed")
		pr, pw := io.Pipe()
		pw.CloseWithError(boom)
		if _, err := skillarchive.Repack(io.Discard, pr); !errors.Is(err, boom) {
			t.Errorf("err %v, want the export's", err)
		}
	})
}

func TestSafePath(t *testing.T) {
	for p, want := range map[string]bool{
		"SKILL.md": true, "scripts/x.py": true, "a/b/c": true, ".hidden": true, "a..b": true,
		"": false, ".": false, "..": false, "../x": false, "a/../b": false, "/a": false, "a/": false,
		"a//b": false, "./a": false, "a\\b": false, "a\x00b": false, "a/./b": false,
	} {
		if got := skillarchive.SafePath(p); got != want {
			t.Errorf("SafePath(%q) = %t, want %t", p, got, want)
		}
	}
}
