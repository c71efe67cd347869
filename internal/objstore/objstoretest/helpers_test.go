package objstoretest_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestFaultyAcceptance: with no fault set, Faulty changes no behaviour.
func TestFaultyAcceptance(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(*testing.T) objstore.Bucket {
		return objstoretest.NewFaulty(memory.New())
	})
}

func TestNewBucket(t *testing.T) {
	files := map[string]string{"a/b.txt": "hello", "c": ""}
	b := objstoretest.NewBucket(t, files)
	var got []string
	err := objstore.Walk(t.Context(), b, "", func(o objstore.Object) error {
		got = append(got, o.Key)
		rc, _, err := b.Get(t.Context(), o.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if string(data) != files[o.Key] {
			t.Errorf("%s = %q, want %q", o.Key, data, files[o.Key])
		}
		return err
	})
	if err != nil || !slices.Equal(got, []string{"a/b.txt", "c"}) {
		t.Errorf("objects %q, %v", got, err)
	}
}

var errDisk = errors.New("disk on fire")

// call runs op on key (for List, as the prefix) and returns its error.
func call(ctx context.Context, b objstore.Bucket, op, key string) error {
	var err error
	switch op {
	case objstore.OpGet:
		var rc io.ReadCloser
		if rc, _, err = b.Get(ctx, key); err == nil {
			rc.Close()
		}
	case objstore.OpGetRange:
		var rc io.ReadCloser
		if rc, _, err = b.GetRange(ctx, key, 0, 1); err == nil {
			rc.Close()
		}
	case objstore.OpStat:
		_, err = b.Stat(ctx, key)
	case objstore.OpPut:
		_, err = b.Put(ctx, key, strings.NewReader("v"), 1, objstore.PutOptions{})
	case objstore.OpDelete:
		err = b.Delete(ctx, key)
	case objstore.OpList:
		_, err = b.List(ctx, objstore.ListOptions{Prefix: key})
	}
	return err
}

var allOps = []string{objstore.OpGet, objstore.OpGetRange, objstore.OpStat, objstore.OpPut, objstore.OpDelete, objstore.OpList}

// TestFaultyFail: a fault hits only its operation and key prefix, every
// call is counted, and Heal restores the bucket.
func TestFaultyFail(t *testing.T) {
	for _, tc := range []struct {
		name, op, prefix string
		fails            func(op, key string) bool
	}{
		{"one op, every key", objstore.OpGet, "", func(op, _ string) bool { return op == objstore.OpGet }},
		{"one op, one prefix", objstore.OpPut, "bad/", func(op, key string) bool {
			return op == objstore.OpPut && strings.HasPrefix(key, "bad/")
		}},
		{"list by prefix", objstore.OpList, "bad/", func(op, key string) bool {
			return op == objstore.OpList && strings.HasPrefix(key, "bad/")
		}},
		{"every op, one prefix", "", "bad/", func(_, key string) bool { return strings.HasPrefix(key, "bad/") }},
		{"every op, every key", "", "", func(string, string) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"ok/k": "v", "bad/k": "v"}))
			f.Fail(tc.op, tc.prefix, errDisk)
			var total int64
			for _, op := range allOps {
				for _, key := range []string{"ok/k", "bad/k", "bad/"} {
					if op != objstore.OpList && key == "bad/" {
						continue
					}
					err := call(t.Context(), f, op, key)
					if want := tc.fails(op, key); errors.Is(err, errDisk) != want || !want && err != nil {
						t.Errorf("%s %q: err = %v, want fault %v", op, key, err, want)
					}
				}
				want := int64(2)
				if op == objstore.OpList {
					want = 3
				}
				total += want
				if n := f.Calls(op); n != want {
					t.Errorf("Calls(%s) = %d, want %d", op, n, want)
				}
				if n := f.Calls(""); n != total {
					t.Errorf("Calls(\"\") = %d, want %d", n, total)
				}
			}
			f.Heal()
			// Put first: an unfaulted Delete above may have removed the key.
			for _, op := range append([]string{objstore.OpPut}, allOps...) {
				if err := call(t.Context(), f, op, "bad/k"); err != nil {
					t.Errorf("%s after Heal: %v", op, err)
				}
			}
		})
	}
}

// TestFaultyBefore: a hook sees the call's options, can stall until the
// caller gives up, and can count requests per key.
func TestFaultyBefore(t *testing.T) {
	f := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"k": "v"}))
	// Lose every conditional write, as a store with a busy key would.
	f.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
		if c.Put.IfMatch != "" {
			return objstore.ErrConflict
		}
		return nil
	})
	// Stall every listing page after the first.
	f.Before(objstore.OpList, func(ctx context.Context, c objstoretest.Call) error {
		if c.List.Token != "" {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	a, err := f.Put(t.Context(), "k", strings.NewReader("w"), 1, objstore.PutOptions{})
	if err != nil {
		t.Fatalf("unconditional Put: %v", err)
	}
	if _, err := f.Put(t.Context(), "k", strings.NewReader("x"), 1, objstore.PutOptions{IfMatch: a.ETag}); !errors.Is(err, objstore.ErrConflict) {
		t.Errorf("conditional Put: %v, want ErrConflict", err)
	}
	if _, err := f.List(t.Context(), objstore.ListOptions{}); err != nil {
		t.Errorf("first page: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.List(ctx, objstore.ListOptions{Token: "k"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second page: %v, want DeadlineExceeded", err)
	}
	if n := f.Calls(objstore.OpPut); n != 2 {
		t.Errorf("Calls(put) = %d, want 2", n)
	}
}

func TestFaultyLimitPage(t *testing.T) {
	f := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{"a": "", "b": "", "c": "", "d": "", "e": ""}))
	f.LimitPage(2)
	var seen []int
	f.Before(objstore.OpList, func(_ context.Context, c objstoretest.Call) error {
		seen = append(seen, c.List.MaxKeys)
		return nil
	})
	n := 0
	if err := objstore.Walk(t.Context(), f, "", func(objstore.Object) error { n++; return nil }); err != nil || n != 5 {
		t.Fatalf("Walk saw %d objects, %v; want 5", n, err)
	}
	if !slices.Equal(seen, []int{2, 2, 2}) || f.Calls(objstore.OpList) != 3 {
		t.Errorf("pages asked with MaxKeys %v, want three of 2", seen)
	}
	page, err := f.List(t.Context(), objstore.ListOptions{MaxKeys: 1})
	if err != nil || len(page.Objects) != 1 {
		t.Errorf("a smaller MaxKeys is kept: %d objects, %v", len(page.Objects), err)
	}
}

func TestFaultyUnknownOp(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Fail with a misspelt operation did not panic")
		}
	}()
	objstoretest.NewFaulty(memory.New()).Fail("getrange", "", errDisk)
}
