package blobs_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

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
		s := blobs.New(b, 1<<20, 24*time.Hour)
		const space = "alice/versions/blobs/"

		st, err := s.Put(ctx, space, []byte("hello"))
		if err != nil {
			t.Fatal(err)
		}
		d := st.Digest
		if d != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
			t.Fatalf("digest %s, want sha256 of hello", d)
		}
		// Storing the same bytes again is not an error and keeps one object.
		if st2, err := s.Put(ctx, space, []byte("hello")); err != nil || st2.Digest != d || st2.Rewrote || st2.ETag != st.ETag {
			t.Fatalf("second put = %+v, %v; want %+v", st2, err, st)
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
		bs, err := s.Put(ctx, space, big)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, space, bs.Digest); !errors.Is(err, errkind.ResourceExhausted) {
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

// TestStoreRewritesOld: a blob stored again once past half the garbage
// collection grace is written again (a new ModTime: collection judges by
// age), and not before.
func TestStoreRewritesOld(t *testing.T) {
	objstoretest.ForEachBackend(t, func(t *testing.T, newBucket func(t *testing.T) objstore.Bucket) {
		ctx := t.Context()
		b := objstoretest.NewAging(newBucket(t))
		const grace, space = 24 * time.Hour, "alice/versions/blobs/"
		s := blobs.New(b, 1<<20, grace)
		st, err := s.Put(ctx, space, []byte("hello"))
		if err != nil || st.Rewrote {
			t.Fatalf("first put = %+v, %v", st, err)
		}
		key := blobs.Key(space, st.Digest)
		for _, tc := range []struct {
			age     time.Duration
			rewrote bool
		}{
			{grace/2 - time.Minute, false},
			{grace/2 + time.Minute, true},
			{2 * grace, true},
		} {
			b.Age(key, tc.age)
			got, err := s.Put(ctx, space, []byte("hello"))
			if err != nil || got.Digest != st.Digest || got.Rewrote != tc.rewrote {
				t.Fatalf("put of a blob %v old = %+v, %v; want rewrote %v", tc.age, got, err, tc.rewrote)
			}
			a, err := b.Stat(ctx, key)
			if err != nil || !s.Fresh(a.ModTime) != (tc.age >= grace/2 && !tc.rewrote) || got.ETag != a.ETag {
				t.Fatalf("after the put: %+v, %v (fresh %v); put said %+v", a, err, s.Fresh(a.ModTime), got)
			}
			if data, err := s.Get(ctx, space, st.Digest); err != nil || string(data) != "hello" {
				t.Fatalf("Get = %q, %v", data, err)
			}
		}
	})
}
