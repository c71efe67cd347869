package skills_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

type tarFile struct {
	mode    int64
	content string
}

func untar(t *testing.T, data []byte) map[string]tarFile {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	out := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("tar: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Errorf("%s: type %c, want a regular file", h.Name, h.Typeflag)
		}
		out[h.Name] = tarFile{mode: h.Mode, content: string(body)}
	}
	return out
}

func testExport(t *testing.T, newBucket newBucketFunc) {
	lib, _ := fixtureLibrary(t, newBucket, nil)
	for _, tc := range []struct {
		name, ref string
		want      map[string]tarFile
	}{
		{"user skill", "/skills/docs/pdf", map[string]tarFile{
			"pdf/SKILL.md":            {0o644, pdfMD},
			"pdf/assets/logo.png":     {0o644, logoPNG},
			"pdf/references/forms.md": {0o644, formsMD},
			"pdf/scripts/run.sh":      {0o755, runSh},
			"pdf/scripts/x.py":        {0o644, xPy}, // under scripts/, not executable
		}},
		{"shared skill", "csv", map[string]tarFile{
			"csv/SKILL.md":             {0o644, csvMD},
			"csv/references/format.md": {0o644, csvRef},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			s, err := lib.Exporter.Export(t.Context(), aliceID, tc.ref, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if s.Folder+"/SKILL.md" == "" || !s.Valid() {
				t.Errorf("Export returned %+v", s)
			}
			if got := untar(t, buf.Bytes()); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("archive =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		small, _ := fixtureLibrary(t, newBucket, func(c *skills.Config) { c.MaxExportBytes = 100 })
		var buf bytes.Buffer
		if _, err := small.Exporter.Export(t.Context(), aliceID, "pdf", &buf); !errors.Is(err, errkind.ResourceExhausted) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
		if buf.Len() != 0 {
			t.Errorf("wrote %d bytes before failing", buf.Len())
		}
	})
	t.Run("unknown skill", func(t *testing.T) {
		if _, err := lib.Exporter.Export(t.Context(), aliceID, "nope", io.Discard); !errors.Is(err, errkind.NotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

// testExportModes: each file is exported with the mode recorded with it
// (under scripts/ or not, with a shebang or not); a file stored without one
// (a plain S3 upload) is executable exactly when it starts with "#!". The
// local backend records every file's own mode, so there a file put without
// one has the mode it was written with.
func testExportModes(t *testing.T, newBucket newBucketFunc) {
	b := newBucket(t)
	lb := skillstest.New()
	lb.User("alice").
		Skill("tool", "", "A tool with scripts in odd places.", "# Tool\n").
		FileMode("tool/scripts/run.sh", "#!/bin/sh\necho run\n", 0o755).
		FileMode("tool/scripts/lib.py", "print('no shebang')\n", 0o644).
		FileMode("tool/bin/tool", "\x7fELF", 0o755).
		FileMode("tool/notes.sh", "#!/bin/sh\n# not to run\n", 0o644).
		FileMode("tool/group.sh", "echo\n", 0o710). // any executable bit
		File("tool/run", "#!/bin/sh\necho run\n").
		File("tool/scripts/helper.py", "print('no shebang')\n").
		File("tool/hash", "#").
		File("tool/empty", "").
		File("tool/bang.txt", "!# not a shebang\n")
	lb.Put(t, b)
	lib := skillstest.Library(t, b, nil)
	var buf bytes.Buffer
	if _, err := lib.Exporter.Export(t.Context(), aliceID, "tool", &buf); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for name, f := range untar(t, buf.Bytes()) {
		got[name] = f.mode
	}
	want := map[string]int64{
		"tool/scripts/run.sh": 0o755, "tool/scripts/lib.py": 0o644, "tool/bin/tool": 0o755, "tool/notes.sh": 0o644, "tool/group.sh": 0o755,
	}
	for _, rel := range []string{"SKILL.md", "run", "scripts/helper.py", "hash", "empty", "bang.txt"} {
		key := "alice/skills/tool/" + rel
		a, err := b.Stat(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		want["tool/"+rel] = int64(filemode.Of(a.Mode, []byte(lb.Files()[key])))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("modes = %v\nwant    %v", got, want)
	}
}
