package vfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

func TestReadResponseCap(t *testing.T) {
	b := objstoretest.NewBucket(t, nil)
	cfg := DefaultConfig()
	cfg.MaxReadResponse = 100
	fs, err := New(b, mounts.Default(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	ctx := context.Background()
	// 20 lines of 19 bytes: 5 fit in 100 bytes with the newlines between them.
	content := strings.Repeat(strings.Repeat("x", 19)+"\n", 20)
	long := strings.Repeat("y", 500) + "\nshort\n"
	for p, c := range map[string]string{"/workspace/many.txt": content, "/workspace/long.txt": long} {
		if _, err := fs.Write(ctx, id, p, c, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := fs.Read(ctx, id, "/workspace/many.txt", 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 100 || res.NextOffset != 5 || res.TotalLines != 20 {
		t.Errorf("Read = %d bytes, next %d, total %d; want <= 100 bytes, next 5, total 20", len(res.Content), res.NextOffset, res.TotalLines)
	}
	res, err = fs.Read(ctx, id, "/workspace/many.txt", res.NextOffset, 0, false)
	if err != nil || res.NextOffset != 10 {
		t.Errorf("continued Read: next %d, %v; want 10", res.NextOffset, err)
	}
	res, err = fs.Read(ctx, id, "/workspace/long.txt", 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 100 || !strings.HasSuffix(res.Content, truncatedMark) || res.NextOffset != 1 {
		t.Errorf("over-long line: %q next %d; want a truncated first line and next 1", res.Content, res.NextOffset)
	}
}

var errDisk = errors.New("disk on fire")

// TestGrepReportsFetchError checks that a failed fetch surfaces as itself,
// not as the cancellation it causes in the rest of the search.
func TestGrepReportsFetchError(t *testing.T) {
	ctx := context.Background()
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1"})
	files := map[string]string{}
	for i := range 3 {
		files[fmt.Sprintf("alice/threads/t1/f%02d.txt", i)] = "needle\n"
	}
	// The first file fails to fetch; the listing gives one key per page and
	// holds every page after the first until the search is cancelled, so
	// the failed fetch always cancels a listing in progress.
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, files))
	b.Fail(objstore.OpGet, "alice/threads/t1/f00.txt", errDisk)
	b.LimitPage(1)
	b.Before(objstore.OpList, func(ctx context.Context, c objstoretest.Call) error {
		if c.List.Prefix == "alice/threads/t1/" && c.List.Delimiter == "" && c.List.Token != "" {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	fs, err := New(b, mounts.Default(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, err = fs.Grep(ctx, id, "/workspace", GrepOptions{Pattern: "needle"})
	if !errors.Is(err, errDisk) {
		t.Errorf("Grep err = %v, want the fetch error", err)
	}
}
