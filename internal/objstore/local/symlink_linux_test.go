package local_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
)

// TestSymlinkSwappedIn races operations against a directory that is
// atomically exchanged with a link to bob's folder (renameat2
// RENAME_EXCHANGE), so at every instant the path is one or the other. A
// check-then-use implementation would sometimes read or write through the
// link; opening each component with O_NOFOLLOW never does.
func TestSymlinkSwappedIn(t *testing.T) {
	data := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(data, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("bob/threads/t1/d/secret.md", bobSecret)
	mk("alice/threads/t1/d/secret.md", "alice's")
	dir := filepath.Join(data, "alice/threads/t1")
	if err := os.Symlink("../../../bob/threads/t1/d", filepath.Join(dir, "swap")); err != nil {
		t.Fatal(err)
	}
	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "d"), unix.AT_FDCWD, filepath.Join(dir, "swap"), unix.RENAME_EXCHANGE)
	}
	if err := exchange(); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE unsupported here: %v", err)
	}
	if err := exchange(); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })

	// bob's ETag, from a bucket of its own: equal bytes have equal ETags.
	other, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	bobs, err := other.Put(t.Context(), "k", strings.NewReader(bobSecret), -1, objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if err := exchange(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	ctx := t.Context()
	const key = "alice/threads/t1/d/secret.md"
	reads := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		if rc, _, err := b.Get(ctx, key); err == nil {
			got, _ := io.ReadAll(rc)
			rc.Close()
			if string(got) == bobSecret {
				t.Fatal("Get read bob's file through a swapped-in link")
			}
			reads++
		}
		_, _ = b.Put(ctx, key, bytes.NewReader([]byte("alice's")), -1, objstore.PutOptions{})
		_ = b.Delete(ctx, "alice/threads/t1/d/other.md")
		page, err := b.List(ctx, objstore.ListOptions{Prefix: "alice/"})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			if o.ETag == bobs.ETag {
				t.Fatalf("List returned bob's file as %q through the link", o.Key)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if got, err := os.ReadFile(filepath.Join(data, "bob/threads/t1/d/secret.md")); err != nil || string(got) != bobSecret {
		t.Errorf("bob's file = %q, %v after the race", got, err)
	}
	if reads == 0 {
		t.Error("no read succeeded: the race never ran the real directory")
	}
}
