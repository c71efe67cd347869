package app

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/examples"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// exampleKeys are the keys the example library takes in the shared library.
func exampleKeys(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	if err := fs.WalkDir(examples.Skills(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			keys = append(keys, prefix+p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func keysOf(t *testing.T, b objstore.Bucket) []string {
	t.Helper()
	var keys []string
	if err := objstore.Walk(t.Context(), b, "", func(o objstore.Object) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestSeedExamples: the example library goes into the shared library on a
// first local run (or whenever the shared library is empty, if asked), and
// nowhere else: not into S3 by default, not into a data directory in use,
// never over a file.
func TestSeedExamples(t *testing.T) {
	cfg, err := Load(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	shared := cfg.Skills.SharedPrefix
	all := exampleKeys(t, shared)
	for _, tc := range []struct {
		name     string
		storage  string
		mode     string
		firstRun bool
		files    map[string]string
		want     []string
	}{
		{"first local run", "local", ExamplesAuto, true, nil, all},
		{"local data directory in use", "local", ExamplesAuto, false, nil, nil},
		{"s3 by default", "s3", ExamplesAuto, false, nil, nil},
		{"s3 when asked", "s3", ExamplesIfEmpty, false, nil, all},
		{"off", "local", ExamplesOff, true, nil, nil},
		{"shared library not empty", "s3", ExamplesIfEmpty, false, map[string]string{shared + "mine/SKILL.md": "x"}, []string{shared + "mine/SKILL.md"}},
		{"user library only", "s3", ExamplesIfEmpty, false, map[string]string{"alice/skills/a/SKILL.md": "x"}, append([]string{"alice/skills/a/SKILL.md"}, all...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := objstoretest.NewBucket(t, tc.files)
			c := cfg
			c.Storage, c.Examples = tc.storage, tc.mode
			if err := seedExamples(t.Context(), b, c, tc.firstRun, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			got := keysOf(t, b)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("keys = %v, want %v", got, want)
			}
		})
	}
}

// TestSeedExamplesKeepsFiles: a file that appears at an example's key
// between the check and the copy (another replica, an operator) is kept.
func TestSeedExamplesKeepsFiles(t *testing.T) {
	cfg, err := Load([]string{"--examples=if-empty"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	key := cfg.Skills.SharedPrefix + "writing/release-notes/SKILL.md"
	b := &putFirst{Bucket: objstoretest.NewBucket(t, nil), key: key, body: "mine"}
	if err := seedExamples(t.Context(), b, cfg, false, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := objstoretest.Get(t, b, key); got != "mine" {
		t.Errorf("%s = %q, want the file that was there kept", key, got)
	}
	if got, want := len(keysOf(t, b)), len(exampleKeys(t, "")); got != want {
		t.Errorf("%d keys, want the %d of the example library", got, want)
	}
}

// putFirst puts body at key just before the first write, as a concurrent
// writer would.
type putFirst struct {
	objstore.Bucket
	key, body string
	done      bool
}

func (p *putFirst) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if !p.done {
		p.done = true
		if _, err := p.Bucket.Put(ctx, p.key, strings.NewReader(p.body), int64(len(p.body)), objstore.PutOptions{}); err != nil {
			return objstore.Attributes{}, err
		}
	}
	return p.Bucket.Put(ctx, key, r, size, opts)
}

func TestNewDataDir(t *testing.T) {
	dir := t.TempDir()
	used := filepath.Join(dir, "used")
	if err := os.MkdirAll(filepath.Join(used, "alice"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{filepath.Join(dir, "absent"): true, t.TempDir(): true, used: false} {
		if got := newDataDir(path); got != want {
			t.Errorf("newDataDir(%s) = %v, want %v", path, got, want)
		}
	}
}
