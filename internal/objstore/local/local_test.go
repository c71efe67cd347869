package local_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/local"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

func newBucket(t *testing.T) *local.Bucket {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestAcceptance(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(t *testing.T) objstore.Bucket { return newBucket(t) })
}

func TestInvalidKeys(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	for _, key := range []string{"", "/abs", "a/../b", "../up", "a//b", "dir/", "./a", ".skillsvc-tmp/x", "a\\b", "nul\x00", "bad\xffutf8", "ctl\x01", "new\nline", "a/del\x7f"} {
		t.Run(key, func(t *testing.T) {
			if _, err := b.Put(ctx, key, bytes.NewReader(nil), 0, objstore.PutOptions{}); !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("Put(%q) err = %v, want ErrInvalidKey", key, err)
			}
			if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("Stat(%q) err = %v, want ErrInvalidKey", key, err)
			}
		})
	}
}

func TestSymlinkCannotEscape(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for _, key := range []string{"link", "linkdir/secret"} {
		if rc, _, err := b.Get(ctx, key); err == nil {
			rc.Close()
			t.Errorf("Get(%q) followed a symlink out of the root", key)
		}
		if _, err := b.Put(ctx, key, bytes.NewReader([]byte("x")), 1, objstore.PutOptions{}); err == nil && key != "link" {
			t.Errorf("Put(%q) wrote through a symlink out of the root", key)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret")); string(got) != "secret" {
		t.Errorf("file outside the root changed to %q", got)
	}
	page, err := b.List(ctx, objstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range page.Objects {
		if o.Key == "linkdir/secret" {
			t.Error("listing descended into a symlinked directory")
		}
	}
}

func TestTempFilesHidden(t *testing.T) {
	dir := t.TempDir()
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if _, err := b.Put(ctx, "a", bytes.NewReader([]byte("x")), 1, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// A crash can leave a temp file; it must never be listed.
	if err := os.WriteFile(filepath.Join(dir, ".skillsvc-tmp", "orphan"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	page, err := b.List(ctx, objstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != 1 || page.Objects[0].Key != "a" {
		t.Errorf("listing = %+v, want only a", page.Objects)
	}
}

func TestETagSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := b.Put(context.Background(), "k", bytes.NewReader([]byte("content")), 7, objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b2, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	got, err := b2.Stat(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != a.ETag {
		t.Errorf("etag after reopen %q, want %q", got.ETag, a.ETag)
	}
}

// TestAcceptanceWithMetrics proves the metrics wrapper changes no behaviour.
func TestAcceptanceWithMetrics(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(t *testing.T) objstore.Bucket {
		return objstore.WrapWithMetrics(newBucket(t), prometheus.NewRegistry())
	})
}

func TestMetricsCount(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := objstore.WrapWithMetrics(newBucket(t), reg)
	ctx := context.Background()
	if _, err := b.Put(ctx, "k", bytes.NewReader([]byte("v")), 1, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "k", bytes.NewReader([]byte("v")), 1, objstore.PutOptions{IfNoneMatch: true}); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("IfNoneMatch: %v", err)
	}
	if _, err := b.Stat(ctx, "missing"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := b.Stat(ctx, "../bad"); err == nil {
		t.Fatal("bad key accepted")
	}
	rc, _, err := b.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	want := `
# HELP skillsvc_objstore_operation_failures_total Object store operations that failed unexpectedly.
# TYPE skillsvc_objstore_operation_failures_total counter
skillsvc_objstore_operation_failures_total{operation="delete"} 0
skillsvc_objstore_operation_failures_total{operation="get"} 0
skillsvc_objstore_operation_failures_total{operation="get_range"} 0
skillsvc_objstore_operation_failures_total{operation="list"} 0
skillsvc_objstore_operation_failures_total{operation="put"} 0
skillsvc_objstore_operation_failures_total{operation="stat"} 1
# HELP skillsvc_objstore_operations_total Object store operations started.
# TYPE skillsvc_objstore_operations_total counter
skillsvc_objstore_operations_total{operation="delete"} 0
skillsvc_objstore_operations_total{operation="get"} 1
skillsvc_objstore_operations_total{operation="get_range"} 0
skillsvc_objstore_operations_total{operation="list"} 0
skillsvc_objstore_operations_total{operation="put"} 2
skillsvc_objstore_operations_total{operation="stat"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "skillsvc_objstore_operations_total", "skillsvc_objstore_operation_failures_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "skillsvc_objstore_operation_duration_seconds"); n != 6 {
		t.Errorf("%d duration series, want one per operation (6)", n)
	}
}

func TestCheck(t *testing.T) {
	b := newBucket(t)
	if err := b.Check(t.Context()); err != nil {
		t.Fatalf("Check = %v", err)
	}
	b.Close()
	if err := b.Check(t.Context()); !errors.Is(err, objstore.ErrUnavailable) {
		t.Fatalf("Check after Close = %v, want ErrUnavailable", err)
	}
}
