package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/alloctest"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// These tests hold the class "no request may crash, pin or outlast the
// replica": work and memory are bounded by the limits before they are
// spent, and a search stops when its caller's time is up.

func memEnv(t *testing.T, tune func(*vfs.Config)) env {
	return newEnv(t, objstoretest.NewBucket(t, nil), tune)
}

// TestEditReplaceAllSizedFirst: replace_all of every byte of a 4 MiB file
// by 10 KiB would need 40 GiB; it is refused from the sizes alone.
func TestEditReplaceAllSizedFirst(t *testing.T) {
	e := memEnv(t, nil)
	e.write(t, alice, "/workspace/a.txt", strings.Repeat("a", 4<<20))
	var err error
	used := alloctest.Bytes(func() {
		_, err = e.fs.Edit(t.Context(), alice, "/workspace/a.txt", "a", strings.Repeat("b", 10<<10), true)
	})
	if !errors.Is(err, errkind.ResourceExhausted) {
		t.Fatalf("Edit err = %v, want ResourceExhausted", err)
	}
	if bound := uint64(64 << 20); used > bound { // the file, read and copied
		t.Errorf("Edit allocated %d bytes, want at most %d", used, bound)
	}
	if got := e.read(t, alice, "/workspace/a.txt"); len(got) != 4<<20 {
		t.Errorf("the file changed to %d bytes", len(got))
	}
}

// TestReadBounds: huge limits and offsets stay in range, and a file of
// empty lines does not become a slice of strings many times its size.
func TestReadBounds(t *testing.T) {
	e := memEnv(t, nil)
	e.write(t, alice, "/workspace/three.txt", "a\nb\nc\n")
	res, err := e.fs.Read(t.Context(), alice, "/workspace/three.txt", 1, math.MaxInt64, false)
	if err != nil || res.NextOffset != 3 || res.Content != "b\nc" {
		t.Errorf("Read(limit MaxInt64) = %+v, %v; want next_offset 3", res, err)
	}
	if _, err := e.fs.Read(t.Context(), alice, "/workspace/three.txt", math.MaxInt64, math.MaxInt64, false); !errors.Is(err, errkind.OutOfRange) {
		t.Errorf("Read(offset MaxInt64) err = %v, want OutOfRange", err)
	}
	e.write(t, alice, "/workspace/newlines.txt", strings.Repeat("\n", 8<<20))
	var total int64
	used := alloctest.Bytes(func() {
		res, err = e.fs.Read(t.Context(), alice, "/workspace/newlines.txt", 4<<20, 10, true)
		total = res.TotalLines
	})
	if err != nil || total != 8<<20 || res.NextOffset != 4<<20+10 {
		t.Fatalf("Read = %d lines, next %d, %v", total, res.NextOffset, err)
	}
	// One []string of 8 Mi lines alone would be 128 MiB.
	if bound := uint64(48 << 20); used > bound {
		t.Errorf("Read allocated %d bytes, want at most %d", used, bound)
	}
}

// TestPatternCaps: patterns whose cost has no useful bound are refused with
// a clear INVALID_ARGUMENT before anything is listed or read.
func TestPatternCaps(t *testing.T) {
	f := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"alice/threads/t1/a.md": "x\n"}))
	e := newEnv(t, f, nil)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"glob dot-dot in the static prefix", func() error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: "../../bob/threads/*.md"})
			return err
		}, `".." segment`},
		{"glob dot-dot inside", func() error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: "docs/../*.md"})
			return err
		}, `".." segment`},
		{"glob empty segment", func() error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: "docs//*.md"})
			return err
		}, "empty"},
		{"glob brace bomb", func() error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: strings.Repeat("{a,*}", 24) + "b"})
			return err
		}, "alternatives"},
		{"nested braces", func() error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: "{" + strings.Repeat("{a,b}", 7) + ",x}"})
			return err
		}, "alternatives"},
		{"glob too long", func() error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: strings.Repeat("a", 5000)})
			return err
		}, "bytes"},
		{"grep file filter brace bomb", func() error {
			_, err := e.fs.Grep(ctx, alice, "/workspace", vfs.GrepOptions{Pattern: "x", Glob: strings.Repeat("{a,*}", 24)})
			return err
		}, "alternatives"},
		{"grep 5 MB pattern", func() error {
			_, err := e.fs.Grep(ctx, alice, "/workspace", vfs.GrepOptions{Pattern: strings.Repeat("(a|b)", 1<<20), Regex: true})
			return err
		}, "bytes"},
		{"grep regex program too large", func() error {
			_, err := e.fs.Grep(ctx, alice, "/workspace", vfs.GrepOptions{Pattern: `(\w+\s*){500}`, Regex: true})
			return err
		}, "instructions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.Calls("")
			err := tc.call()
			if !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want InvalidArgument mentioning %q", err, tc.want)
			}
			if n := f.Calls("") - before; n != 0 {
				t.Errorf("%d storage calls before refusing", n)
			}
		})
	}
	// Within the caps, patterns still work.
	if res, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: "{a,b,c}.{md,txt}"}); err != nil || len(res.Matches) != 1 {
		t.Errorf("Glob with braces = %+v, %v", res, err)
	}
}

// TestGrepLongLineIsClipped: a line longer than max-grep-line-bytes is
// searched in its first part only, and the result says it is incomplete.
func TestGrepLongLineIsClipped(t *testing.T) {
	e := memEnv(t, func(c *vfs.Config) { c.MaxGrepLineBytes = 1000 })
	e.write(t, alice, "/workspace/min.js", "head "+strings.Repeat("x", 5000)+" needle\nneedle on a short line\n")
	res, err := e.fs.Grep(t.Context(), alice, "/workspace", vfs.GrepOptions{Pattern: "needle"})
	if err != nil || len(res.Matches) != 1 || res.Matches[0].Line != 2 || !res.Truncated {
		t.Errorf("Grep = %+v, %v; want only line 2, truncated", res, err)
	}
}

// TestSearchStopsWithCaller: a Grep with a costly (but allowed) expression
// over long files, and a Glob with a costly pattern over many files, ask
// storage for nothing more once their caller has gone, return its error and
// leave no goroutine behind, so no core stays busy for a caller that has
// gone. The caller goes at a point of the work (right after the second
// file is fetched, or the second page listed), not of the clock, so the
// test holds on a loaded machine; TestMatchLinesStopsWithCaller shows that
// matching a file stops at its next check.
func TestSearchStopsWithCaller(t *testing.T) {
	files := map[string]string{}
	// Lines as long as one match may take (a match cannot be interrupted):
	// the search checks its context between them.
	line := strings.Repeat("ab", 1<<10) + "\n"
	for i := range 8 {
		files[fmt.Sprintf("alice/threads/t1/f%03d.txt", i)] = strings.Repeat(line, 1800) // 3.6 MB each
	}
	for i := range 5000 {
		files[fmt.Sprintf("alice/threads/t1/many/%05d/%s.md", i, strings.Repeat("a", 100))] = ""
	}
	bucket := objstoretest.NewBucket(t, files)
	for _, tc := range []struct {
		name string
		op   string // the storage calls counted
		at   int64  // the caller goes once this many have answered
		most int64  // calls allowed after that: already handed out
		run  func(ctx context.Context, e env) error
	}{
		{"grep", objstore.OpGet, 2, 1, func(ctx context.Context, e env) error {
			// Nested counted repeats keep dozens of NFA threads alive on
			// every byte: about 1 µs a byte, seconds for one of these files
			// (much more under -race). Two fetches at a time: the walk may
			// have handed a third file to a fetch that waits for a slot
			// when the caller goes.
			_, err := e.fs.Grep(ctx, alice, "/workspace", vfs.GrepOptions{Pattern: `([ab]{1,5}){1,5}c`, Regex: true})
			return err
		}},
		{"glob", objstore.OpList, 2, 0, func(ctx context.Context, e env) error {
			_, err := e.fs.Glob(ctx, alice, "/workspace", vfs.GlobOptions{Pattern: "**/" + strings.Repeat("*a", 40) + "{b,c,d,e,f,g,h,i}"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goroutines := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			counted := &cancelAfter{Bucket: bucket, op: tc.op, at: tc.at, cancel: cancel}
			// Pages of 1,000 keys, as S3 lists them.
			paged := objstoretest.NewFaulty(counted)
			paged.LimitPage(1000)
			e := newEnv(t, paged, func(c *vfs.Config) { c.GrepConcurrency = 2 })
			err := tc.run(ctx, e)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if after := counted.calls.Load() - tc.at; after > tc.most {
				t.Errorf("%d %s calls after the caller went, want at most %d", after, tc.op, tc.most)
			}
			// A finished goroutine may take a moment to exit after Wait;
			// the minute only bounds a hang.
			for end := time.Now().Add(time.Minute); runtime.NumGoroutine() > goroutines && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Errorf("%d goroutines left running (was %d)", n, goroutines)
			}
		})
	}
}

// cancelAfter counts the bucket's calls of op and cancels the caller once
// the at-th has answered, as a caller giving up part-way through would.
type cancelAfter struct {
	objstore.Bucket
	op     string
	at     int64
	cancel context.CancelFunc
	calls  atomic.Int64
}

func (c *cancelAfter) count(op string) {
	if op == c.op && c.calls.Add(1) == c.at {
		c.cancel()
	}
}

func (c *cancelAfter) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	defer c.count(objstore.OpGet)
	return c.Bucket.Get(ctx, key)
}

func (c *cancelAfter) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	defer c.count(objstore.OpGet)
	return c.Bucket.GetRange(ctx, key, offset, length)
}

func (c *cancelAfter) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	defer c.count(objstore.OpList)
	return c.Bucket.List(ctx, opts)
}
