package library_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestPinnedReads: a read pinned to a version comes back from the library
// as a value: the old version's SKILL.md and files (binary ones told so),
// a bare file name found as its ".md", a binary file refused as text, and
// the version's archive with scripts executable; the live copy, published
// since, is not what they read.
func TestPinnedReads(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		ctx := t.Context()
		e := newEnv(t, newBucket(t), nil)
		id := caller(t, "alice")
		files := folder("pdf", "Read PDFs.", "reference.md", "see here", "data.bin", "a\x00b", "scripts/run.sh", "echo hi")
		files[3].Mode = 0o755 // recorded: executable without a shebang
		v1, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: files})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.pub.Publish(ctx, alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "Read PDFs, newer.")}); err != nil {
			t.Fatal(err)
		}
		mount := e.lib.Catalog.Mount()

		d, err := e.pub.GetPinned(ctx, alice, id, "pdf", v1.Version.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Path != mount+"/pdf" || d.ETag != v1.Version.ID || d.Description != "Read PDFs." || d.Layer != skillview.LayerUser {
			t.Fatalf("pinned skill = %+v", d.Skill)
		}
		binary := map[string]bool{}
		for _, f := range d.Files {
			binary[f.Path] = f.Binary
		}
		if len(binary) != 3 || !binary["data.bin"] || binary["reference.md"] || binary["scripts/run.sh"] {
			t.Fatalf("pinned files = %+v", d.Files)
		}
		listed := map[string]fs.FileMode{}
		for _, f := range d.Manifest.Files {
			listed[strings.TrimPrefix(f.Path, mount+"/pdf/")] = f.Mode
		}
		if want := map[string]fs.FileMode{"SKILL.md": 0o644, "reference.md": 0o644, "data.bin": 0o644, "scripts/run.sh": 0o755}; !reflect.DeepEqual(listed, want) {
			t.Fatalf("pinned manifest modes = %v, want %v", listed, want)
		}

		text, vpath, err := e.pub.ReadPinned(ctx, alice, id, "pdf", v1.Version.ID, "reference")
		if err != nil || text != "see here" || vpath != mount+"/pdf/reference.md" {
			t.Fatalf("ReadPinned(reference) = %q, %q, %v", text, vpath, err)
		}
		_, _, err = e.pub.ReadPinned(ctx, alice, id, "pdf", v1.Version.ID, "data.bin")
		wantKind(t, err, errkind.FailedPrecondition)
		_, _, err = e.pub.ReadPinned(ctx, alice, id, "pdf", v1.Version.ID, "missing")
		wantKind(t, err, errkind.NotFound)

		rendered, sk, err := e.pub.RenderPinned(ctx, alice, id, "pdf", v1.Version.ID, skillview.RenderOptions{})
		if err != nil || sk.Path != mount+"/pdf" || !bytes.Contains([]byte(rendered), []byte("Do it.")) {
			t.Fatalf("RenderPinned = %q, %+v, %v", rendered, sk, err)
		}

		var archive bytes.Buffer
		if err := e.pub.ExportPinned(ctx, alice, id, "pdf", v1.Version.ID, &archive); err != nil {
			t.Fatal(err)
		}
		gz, err := gzip.NewReader(&archive)
		if err != nil {
			t.Fatal(err)
		}
		modes := map[string]int64{}
		tr := tar.NewReader(gz)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			modes[hdr.Name] = hdr.Mode
		}
		if len(modes) != 4 || modes["pdf/scripts/run.sh"] != 0o755 || modes["pdf/reference.md"] != 0o644 || modes["pdf/SKILL.md"] != 0o644 {
			t.Fatalf("archive entries = %v", modes)
		}
	})
}
