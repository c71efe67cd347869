package blobs_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.Shutdown()
	os.Exit(code)
}

func TestStore(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		ctx := context.Background()
		b := newBucket(t)
		s := blobs.New(b, 1<<20)
		const space = "alice/versions/blobs/"

		d, err := s.Put(ctx, space, []byte("hello"))
		if err != nil {
			t.Fatal(err)
		}
		if d != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
			t.Fatalf("digest %s, want sha256 of hello", d)
		}
		// Storing the same bytes again is not an error and keeps one object.
		if d2, err := s.Put(ctx, space, []byte("hello")); err != nil || d2 != d {
			t.Fatalf("second put = %s, %v", d2, err)
		}
		if got := objstoretest.Get(t, b, space+"sha256/"+string(d)); got != "hello" {
			t.Fatalf("stored %q", got)
		}
		got, err := s.Get(ctx, space, d)
		if err != nil || string(got) != "hello" {
			t.Fatalf("Get = %q, %v", got, err)
		}
		if ok, err := s.Has(ctx, space, d); !ok || err != nil {
			t.Fatalf("Has = %v, %v", ok, err)
		}
		// Another space does not hold it: spaces are per library.
		if ok, err := s.Has(ctx, "bob/versions/blobs/", d); ok || err != nil {
			t.Fatalf("Has in another space = %v, %v", ok, err)
		}
		if _, err := s.Get(ctx, "bob/versions/blobs/", d); !objstore.IsNotFound(err) {
			t.Fatalf("Get in another space: %v, want not found", err)
		}

		// A replaced object is refused, not served.
		objstoretest.Put(t, b, space+"sha256/"+string(d), "jello")
		if _, err := s.Get(ctx, space, d); !errors.Is(err, blobs.ErrCorrupt) {
			t.Fatalf("Get of a replaced blob: %v, want ErrCorrupt", err)
		}
		// Over the read limit.
		big := []byte(strings.Repeat("x", 1<<20+1))
		bd, err := s.Put(ctx, space, big)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, space, bd); !errors.Is(err, errkind.ResourceExhausted) {
			t.Fatalf("Get over the limit: %v", err)
		}
		if _, err := s.Get(ctx, space, "../x"); !errors.Is(err, errkind.InvalidArgument) {
			t.Fatalf("Get of a bad digest: %v", err)
		}
		if err := s.Delete(ctx, space, d); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.Has(ctx, space, d); ok {
			t.Fatal("deleted blob still there")
		}
	})
}
