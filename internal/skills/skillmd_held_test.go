package skills

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestSkillMDParsedOnce: GetSkill and RenderSkill read and parse a
// SKILL.md of the user's own twice per version (it is kept from its second
// ask, admission): later calls read nothing, not even the file cache, and
// a new version (once the listing has it) is read afresh.
func TestSkillMDParsedOnce(t *testing.T) {
	mem := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")})
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib, _ := replicaOf(t, objstoretest.NewFaulty(mem), nil, clk)
	reads := func() float64 { return fileReads(lib) }
	var d skillview.Detail
	for range 2 {
		var err error
		if d, err = lib.Catalog.Get(t.Context(), alice, "one"); err != nil || !strings.Contains(d.Body, "# one") {
			t.Fatalf("Get = %+v, %v", d, err)
		}
	}
	before := reads()
	for range 3 {
		again, err := lib.Catalog.Get(t.Context(), alice, "one")
		if err != nil || again.Raw != d.Raw || again.Body != d.Body || again.ETag != d.ETag || again.Description != d.Description {
			t.Fatalf("Get again = %+v, %v; want %+v", again, err, d)
		}
		if _, _, err := lib.Catalog.Render(t.Context(), alice, "one", skillview.RenderOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads() - before; n != 0 {
		t.Errorf("the same version was read %v more times, want 0", n)
	}

	changed := "---\nname: one\ndescription: Changed.\n---\n# one, changed\n"
	if _, err := mem.Put(t.Context(), "alice/skills/one/SKILL.md", strings.NewReader(changed), int64(len(changed)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lib.Catalog.DropIndex(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	d, err := lib.Catalog.Get(t.Context(), alice, "one")
	if err != nil || d.Raw != changed || d.Body != "# one, changed\n" || d.Description != "Changed." {
		t.Errorf("Get after the change = %+v, %v; want the new version", d, err)
	}
}

// fileReads is every file read the library made so far, whatever the
// file cache answered.
func fileReads(lib *Library) float64 {
	sum := 0.0
	for _, r := range []string{"hit", "miss", "uncached"} {
		sum += testutil.ToFloat64(lib.metrics.Files.WithLabelValues(r))
	}
	return sum
}

// noETags is a bucket whose objects carry no version (ETag ""), as some
// S3-compatible stores list them.
type noETags struct{ objstore.Bucket }

func (b noETags) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	rc, a, err := b.Bucket.Get(ctx, key)
	a.ETag = ""
	return rc, a, err
}

func (b noETags) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	rc, a, err := b.Bucket.GetRange(ctx, key, offset, length)
	a.ETag = ""
	return rc, a, err
}

func (b noETags) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	a, err := b.Bucket.Stat(ctx, key)
	a.ETag = ""
	return a, err
}

func (b noETags) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	p, err := b.Bucket.List(ctx, opts)
	for i := range p.Objects {
		p.Objects[i].ETag = ""
	}
	return p, err
}

// TestSkillMDUnversionedReadEachTime: a SKILL.md without an ETag names no
// version, so GetSkill keeps no parse of it: a change shows up at the next
// call.
func TestSkillMDUnversionedReadEachTime(t *testing.T) {
	mem := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")})
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib, _ := replicaOf(t, noETags{mem}, nil, clk)
	if d, err := lib.Catalog.Get(t.Context(), alice, "one"); err != nil || d.Description != "Does one." {
		t.Fatalf("Get = %+v, %v", d, err)
	}
	changed := "---\nname: one\ndescription: Changed.\n---\n# one, changed\n"
	if _, err := mem.Put(t.Context(), "alice/skills/one/SKILL.md", strings.NewReader(changed), int64(len(changed)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, err := lib.Catalog.Get(t.Context(), alice, "one"); err != nil || d.Description != "Changed." {
		t.Errorf("Get after the change = %q, %v; want the new version", d.Description, err)
	}
}

// TestSkillFileFrontmatter: a SKILL.md held for GetSkill serves the
// frontmatter ParseSkillMD returns, whether its Raw and Extra are held or
// decoded from its JSON per call; the common frontmatter holds neither.
func TestSkillFileFrontmatter(t *testing.T) {
	for _, tc := range []struct {
		name, front string
		derived     bool
	}{
		{"spec fields and metadata", "name: one\ndescription: Does one.\nlicense: MIT\nmetadata:\n  owner: a\n", true},
		{"empty metadata", "name: one\ndescription: Does one.\nmetadata: {}\n", true},
		{"metadata not a map", "name: one\ndescription: Does one.\nmetadata: [a]\n", true},
		{"a metadata number", "name: one\ndescription: Does one.\nmetadata:\n  version: 1.20\n", false},
		{"a metadata list", "name: one\ndescription: Does one.\nmetadata:\n  tags: [a]\n", false},
		{"extra fields", "name: one\ndescription: Does one.\ntags: [a, b]\nx-tool:\n  depth: 3\n  on: true\n  none: null\n  empty: {}\n  list: []\n", true},
		{"allowed tools as a string", "name: one\ndescription: Does one.\nallowed-tools: Read Grep\n", true},
		{"a version YAML reads as a number", "name: one\ndescription: Does one.\nversion: 1.0\n", false},
		{"a date", "name: one\ndescription: Does one.\nreleased: 2024-01-02\n", false},
		{"a display name", "name: Skill One\ndescription: Does one.\n", true},
		{"invalid", "description: [no, name]\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte("---\n" + tc.front + "---\n# One\n")
			fm, body, problems := skillmd.ParseSkillMD(raw, "one")
			f := skillview.ParseSkillMD(raw, "e1", "one")
			if got := f.FullFrontmatter(); !reflect.DeepEqual(got, fm) {
				t.Errorf("frontmatter = %#v\nwant %#v", got, fm)
			}
			if f.Body != body || !reflect.DeepEqual(f.Problems, problems) {
				t.Errorf("body %q, problems %+v; want %q, %+v", f.Body, f.Problems, body, problems)
			}
			if f.Derived != tc.derived || (f.Derived && (f.Frontmatter.Raw != nil || f.Frontmatter.Extra != nil || f.Frontmatter.Metadata != nil)) {
				t.Errorf("derived = %v (Raw %v, Extra %v, Metadata %v), want %v", f.Derived, f.Frontmatter.Raw, f.Frontmatter.Extra, f.Frontmatter.Metadata, tc.derived)
			}
		})
	}
}

// TestGetReplyKeptWithoutTheFile: a kept GetSkill reply names the
// SKILL.md's version, so serving it reads and parses nothing, even once
// the parsed file has left the held budget (with many users most have).
func TestGetReplyKeptWithoutTheFile(t *testing.T) {
	mem := objstoretest.NewBucket(t, map[string]string{"alice/skills/one/SKILL.md": skillMD("one")})
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	lib, _ := replicaOf(t, mem, nil, clk)
	reads := func() float64 { return fileReads(lib) }
	rc := replies.New(lib.Catalog.ReplyCacheBytes(), nil)
	builds := 0
	get := func() string {
		t.Helper()
		b, err := getReply(t.Context(), lib, rc, alice, "one", func(d skillview.Detail) ([]byte, error) {
			builds++
			return []byte(d.Body), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	get() // a user's own skill's reply is kept from its second ask
	first := get()
	if builds != 2 || !strings.Contains(first, "# one") {
		t.Fatalf("second GetReply = %q after %d builds", first, builds)
	}
	lib.Catalog.skillMDs.Purge() // as the held budget's LRU does
	before := reads()
	if again := get(); again != first || builds != 2 {
		t.Fatalf("GetReply again = %q after %d builds, want the kept %q", again, builds, first)
	}
	if n := reads() - before; n != 0 {
		t.Errorf("a kept reply read the SKILL.md %v times, want 0", n)
	}

	// A new version is a new key: read, parsed and built.
	changed := "---\nname: one\ndescription: Changed.\n---\n# one, changed\n"
	if _, err := mem.Put(t.Context(), "alice/skills/one/SKILL.md", strings.NewReader(changed), int64(len(changed)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lib.Catalog.DropIndex(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "# one, changed\n" || builds != 3 {
		t.Errorf("GetReply after the change = %q after %d builds, want the new body built", got, builds)
	}
}
