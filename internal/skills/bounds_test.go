package skills_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/alloctest"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestRenderBoundsOutputFirst: a body of many placeholders times large
// arguments is refused before the text is built, so the request costs
// memory in proportion to its inputs, not to their product.
func TestRenderBoundsOutputFirst(t *testing.T) {
	body := strings.Repeat("$ARGUMENTS ", 50_000) // 550 KB, under max-file-bytes
	b := skillstest.New()
	b.User("alice").Skill("bomb", "", "Copies its arguments.", body)
	lib := skillstest.Library(t, b.Bucket(t), nil)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	args := strings.Repeat("x", 1<<20) // naive output: 50,000 × 1 MiB = 49 GiB

	var err error
	used := alloctest.Bytes(func() {
		_, _, err = lib.Catalog.Render(t.Context(), alice, "bomb", skillview.RenderOptions{Arguments: args})
	})
	if !errors.Is(err, errkind.ResourceExhausted) {
		t.Fatalf("Render err = %v, want ResourceExhausted", err)
	}
	// The skill is read (body twice: raw and parsed) and the arguments are
	// held; nothing of the product's size may be allocated.
	if bound := uint64(16 << 20); used > bound {
		t.Errorf("Render allocated %d bytes, want at most %d", used, bound)
	}
	// Within the limit it renders.
	if text, _, err := lib.Catalog.Render(t.Context(), alice, "bomb", skillview.RenderOptions{Arguments: "ok"}); err != nil || strings.Count(text, "ok ") != 50_000 {
		t.Errorf("small render: %v", err)
	}
}

// TestReadFileNotFoundIsShort: the NOT_FOUND for an unknown file names a few
// of the skill's files and says how many more there are, however many.
func TestReadFileNotFoundIsShort(t *testing.T) {
	b := skillstest.New()
	l := b.User("alice").Skill("big", "", "Many files.", "# Big\n")
	for i := range 10_000 {
		l.File(fmt.Sprintf("big/references/file-%05d.md", i), "x\n")
	}
	lib := skillstest.Library(t, b.Bucket(t), nil)
	_, _, err := lib.Catalog.ReadFile(t.Context(), mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"}), "big", "missing.md", skillview.ReadOptions{})
	if !errors.Is(err, errkind.NotFound) {
		t.Fatalf("err = %v, want NotFound", err)
	}
	if msg := err.Error(); len(msg) > 2048 || !strings.Contains(msg, "and 9981 more") || !strings.Contains(msg, "references/file-00000.md") || strings.Contains(msg, "GetSkill") {
		t.Errorf("message (%d bytes) = %.300q…; want a short list and the count left out", len(msg), msg)
	}
}

// TestExportCountsArchiveOverhead: thousands of empty files hold no bytes
// but make an archive of header blocks; the export limit counts those, and
// the bound it uses is never below the real archive.
func TestExportCountsArchiveOverhead(t *testing.T) {
	b := skillstest.New()
	l := b.User("alice").Skill("empty", "", "Many empty files.", "# Empty\n")
	for i := range 2000 {
		l.File(fmt.Sprintf("empty/assets/%s-%04d.txt", strings.Repeat("long-name-", 12), i), "")
	}
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	lib := skillstest.Library(t, b.Bucket(t), func(c *skills.Config) { c.MaxExportBytes = 1 << 20 })
	var out bytes.Buffer
	if _, err := lib.Exporter.Export(t.Context(), alice, "empty", &out); !errors.Is(err, errkind.ResourceExhausted) {
		t.Fatalf("Export err = %v, want ResourceExhausted for 2000 header blocks", err)
	}
	// With room, the real archive stays within the same bound.
	lib = skillstest.Library(t, b.Bucket(t), func(c *skills.Config) { c.MaxExportBytes = 4 << 20 })
	out.Reset()
	if _, err := lib.Exporter.Export(t.Context(), alice, "empty", &out); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n > 4<<20 {
		t.Errorf("archive is %d bytes (%v), over the 4 MiB it was allowed", n, err)
	}
}

// TestGetSkillListsBoundedFiles: a skill with thousands of files is described
// up to max-listed-files, with one ranged read each, and the rest counted.
func TestGetSkillListsBoundedFiles(t *testing.T) {
	b := skillstest.New()
	l := b.User("alice").Skill("big", "", "Many files.", "# Big\n")
	for i := range 3000 {
		l.File(fmt.Sprintf("big/references/r%04d.md", i), "text\n")
	}
	bucket := objstoretest.NewFaulty(b.Bucket(t))
	lib := skillstest.Library(t, bucket, func(c *skills.Config) { c.MaxListedFiles = 100 })
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	if _, err := lib.Catalog.Skills(t.Context(), alice, skillview.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	before := bucket.Calls(objstore.OpGetRange)
	d, err := lib.Catalog.Get(t.Context(), alice, "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 100 || d.FilesOmitted != 2900 || d.Files[0].Path != "references/r0000.md" {
		t.Errorf("Get = %d files (first %q), %d omitted; want 100 and 2900", len(d.Files), d.Files[0].Path, d.FilesOmitted)
	}
	if n := bucket.Calls(objstore.OpGetRange) - before; n > 100 {
		t.Errorf("Get made %d ranged reads, want at most 100", n)
	}
}
