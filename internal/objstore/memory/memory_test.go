package memory_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

func TestAcceptance(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(*testing.T) objstore.Bucket { return memory.New() })
}

// TestAcceptanceWithMetrics proves the metrics wrapper changes no behaviour
// of this backend either.
func TestAcceptanceWithMetrics(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(*testing.T) objstore.Bucket {
		return objstore.WrapWithMetrics(memory.New(), prometheus.NewRegistry())
	})
}

// TestParentAndChildKeys: as in S3, "a" and "a/b" are independent keys
// (local refuses this with ErrInvalidKey; a directory cannot be a file).
func TestParentAndChildKeys(t *testing.T) {
	b := memory.New()
	objstoretest.Put(t, b, "a", "parent")
	objstoretest.Put(t, b, "a/b", "child")
	if got := objstoretest.Get(t, b, "a"); got != "parent" {
		t.Errorf("Get(a) = %q", got)
	}
	page, err := b.List(t.Context(), objstore.ListOptions{Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != 1 || page.Objects[0].Key != "a" || !slices.Equal(page.CommonPrefixes, []string{"a/"}) {
		t.Errorf("root listing = %+v", page)
	}
}

func TestInvalidKeys(t *testing.T) {
	b := memory.New()
	for name, key := range map[string]string{"empty": "", "too long": strings.Repeat("k", 1025), "not UTF-8": "bad\xff"} {
		t.Run(name, func(t *testing.T) {
			if _, err := b.Put(t.Context(), key, strings.NewReader(""), 0, objstore.PutOptions{}); !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("Put err = %v, want ErrInvalidKey", err)
			}
			if _, err := b.Stat(t.Context(), key); !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("Stat err = %v, want ErrInvalidKey", err)
			}
		})
	}
}

// TestStoredBytesAreIsolated: neither the writer's buffer nor a reader's
// can change what is stored.
func TestStoredBytesAreIsolated(t *testing.T) {
	b := memory.New()
	buf := []byte("original")
	if _, err := b.Put(t.Context(), "k", bytes.NewReader(buf), int64(len(buf)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	rc, _, err := b.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 8)
	if _, err := io.ReadFull(rc, p); err != nil {
		t.Fatal(err)
	}
	copy(p, "YYYYYYYY")
	if got := objstoretest.Get(t, b, "k"); got != "original" {
		t.Errorf("stored content = %q, want original", got)
	}
}

func TestErrors(t *testing.T) {
	b := memory.New()
	objstoretest.Put(t, b, "k", "value")
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		call func() error
		want error // nil: any error
	}{
		{"negative offset", func() error { _, _, err := b.GetRange(t.Context(), "k", -1, 2); return err }, nil},
		{"short body", func() error {
			_, err := b.Put(t.Context(), "short", strings.NewReader("abc"), 4, objstore.PutOptions{})
			return err
		}, nil},
		{"long body", func() error {
			_, err := b.Put(t.Context(), "long", strings.NewReader("abcde"), 4, objstore.PutOptions{})
			return err
		}, nil},
		{"cancelled get", func() error { _, _, err := b.Get(cancelled, "k"); return err }, context.Canceled},
		{"cancelled stat", func() error { _, err := b.Stat(cancelled, "k"); return err }, context.Canceled},
		{"cancelled put", func() error {
			_, err := b.Put(cancelled, "k", strings.NewReader("x"), 1, objstore.PutOptions{})
			return err
		}, context.Canceled},
		{"cancelled delete", func() error { return b.Delete(cancelled, "k") }, context.Canceled},
		{"cancelled list", func() error { _, err := b.List(cancelled, objstore.ListOptions{}); return err }, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if got := objstoretest.Get(t, b, "k"); got != "value" {
		t.Errorf("failed calls changed k to %q", got)
	}
	for _, key := range []string{"short", "long"} {
		if _, err := b.Stat(t.Context(), key); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("a body of the wrong size stored %q: %v", key, err)
		}
	}
}

// blockingReader returns its content once release is closed.
type blockingReader struct {
	release chan struct{}
	r       io.Reader
}

func (b blockingReader) Read(p []byte) (int, error) {
	<-b.release
	return b.r.Read(p)
}

// TestSlowPutBlocksNoOne: Put reads its body before taking the lock.
func TestSlowPutBlocksNoOne(t *testing.T) {
	b := memory.New()
	objstoretest.Put(t, b, "other", "x")
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := b.Put(t.Context(), "slow", blockingReader{release, strings.NewReader("s")}, 1, objstore.PutOptions{})
		done <- err
	}()
	others := make(chan error, 1)
	go func() {
		if _, err := b.Put(t.Context(), "fast", strings.NewReader("f"), 1, objstore.PutOptions{}); err != nil {
			others <- err
			return
		}
		_, err := b.List(t.Context(), objstore.ListOptions{})
		others <- err
	}()
	select {
	case err := <-others:
		if err != nil {
			t.Errorf("Put and List while a Put reads its body: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("a Put reading its body blocked other calls")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := objstoretest.Get(t, b, "slow"); got != "s" {
		t.Errorf("slow = %q", got)
	}
}

// TestListTokenSkipsPrefix: a page ending in a common prefix continues past
// every key below it.
func TestListTokenSkipsPrefix(t *testing.T) {
	b := memory.New()
	for _, k := range []string{"a", "b/1", "b/2", "b/3", "c"} {
		objstoretest.Put(t, b, k, k)
	}
	var got []string
	opts := objstore.ListOptions{Delimiter: "/", MaxKeys: 1}
	for {
		page, err := b.List(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			got = append(got, o.Key)
		}
		got = append(got, page.CommonPrefixes...)
		if page.NextToken == "" {
			break
		}
		opts.Token = page.NextToken
	}
	if want := []string{"a", "b/", "c"}; !slices.Equal(got, want) {
		t.Errorf("pages = %q, want %q", got, want)
	}
}
