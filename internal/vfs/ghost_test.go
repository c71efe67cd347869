package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// ghostBucket lists ghost prefixes (and the directories above them) as
// common prefixes of every delimited listing above them, with no object
// below them, as SeaweedFS lists a
// directory whose objects were deleted for a minute or two; it counts
// listings.
type ghostBucket struct {
	objstore.Bucket
	ghosts []string // "alice/threads/t1/gone/"

	mu    sync.Mutex
	lists int
}

func (g *ghostBucket) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	g.mu.Lock()
	g.lists++
	g.mu.Unlock()
	page, err := g.Bucket.List(ctx, opts)
	if err != nil || opts.Delimiter == "" || opts.Token != "" {
		return page, err
	}
	for _, gh := range g.ghosts {
		rest, ok := strings.CutPrefix(gh, opts.Prefix)
		if !ok || rest == "" {
			continue
		}
		if cp := opts.Prefix + rest[:strings.Index(rest, "/")+1]; !slices.Contains(page.CommonPrefixes, cp) {
			page.CommonPrefixes = append(page.CommonPrefixes, cp)
		}
	}
	slices.Sort(page.CommonPrefixes)
	return page, nil
}

func (g *ghostBucket) listings() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lists
}

// TestGhostDirectories: a common prefix a store lists with no object below
// it is no directory: List leaves it out, Stat and List of it are NotFound,
// and a recursive Delete finds nothing to delete. Confirming costs one more
// listing per page when the directory holds at most a page of objects, and
// one per directory past them.
func TestGhostDirectories(t *testing.T) {
	const ws = "alice/threads/t1/"
	for _, tc := range []struct {
		name      string
		files     map[string]string
		ghosts    []string
		want      []string
		wantLists int // for the List of /workspace
	}{
		{
			name:      "small directory",
			files:     map[string]string{ws + "top.md": "x", ws + "real/a.md": "y", ws + "zeta/b.md": "z"},
			ghosts:    []string{ws + "gone/", ws + "deep/gone/"},
			want:      []string{"real", "top.md", "zeta"},
			wantLists: 2, // the page, and one listing settling every directory
		},
		{
			name:      "files only",
			files:     map[string]string{ws + "a.md": "x", ws + "b.md": "y"},
			want:      []string{"a.md", "b.md"},
			wantLists: 1, // no common prefix to confirm
		},
		{
			name: "a directory holding more than a page",
			files: func() map[string]string {
				m := map[string]string{ws + "real/b.md": "y"}
				for i := range objstore.DefaultMaxKeys + 1 {
					m[fmt.Sprintf("%sa-big/%04d.md", ws, i)] = "x"
				}
				return m
			}(),
			ghosts:    []string{ws + "gone/"},
			want:      []string{"a-big", "real"},
			wantLists: 4, // the page, a page of keys (settling a-big), one each for gone and real
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &ghostBucket{Bucket: objstoretest.NewBucket(t, tc.files), ghosts: tc.ghosts}
			fs, err := vfs.New(b, mounts.Default(), vfs.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			before := b.listings()
			res, err := fs.List(ctx, alice, "/workspace", 0, "")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range res.Entries {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("List /workspace = %q, want %q (no ghost)", names, tc.want)
			}
			if n := b.listings() - before; n != tc.wantLists {
				t.Errorf("List /workspace made %d listings, want %d", n, tc.wantLists)
			}
			for _, gh := range tc.ghosts {
				top, _, _ := strings.Cut(strings.TrimPrefix(gh, ws), "/")
				gone := "/workspace/" + top
				if _, err := fs.Stat(ctx, alice, gone); !errors.Is(err, errkind.NotFound) {
					t.Errorf("Stat %s: %v, want NotFound", gone, err)
				}
				if _, err := fs.List(ctx, alice, gone, 0, ""); !errors.Is(err, errkind.NotFound) {
					t.Errorf("List %s: %v, want NotFound", gone, err)
				}
				if n, err := fs.Delete(ctx, alice, gone, true); !errors.Is(err, errkind.NotFound) || n != 0 {
					t.Errorf("Delete %s: %d, %v; want NotFound", gone, n, err)
				}
			}
			if !slices.Contains(tc.want, "real") {
				return
			}
			if info, err := fs.Stat(ctx, alice, "/workspace/real"); err != nil || !info.IsDir {
				t.Errorf("Stat /workspace/real: %+v, %v; want a directory", info, err)
			}
		})
	}
}
