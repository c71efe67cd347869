package libindex

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

const keyA, keyB = "alice/skills/a/SKILL.md", "alice/skills/b/SKILL.md"

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: A skill.\n---\nbody\n"
}

// wantSkills fails unless x holds the heads of exactly keys.
func wantSkills(t *testing.T, x *Index, keys ...string) {
	t.Helper()
	if len(x.Heads) != len(keys) {
		t.Fatalf("index holds %d skills, want %v", len(x.Heads), keys)
	}
	for _, k := range keys {
		if _, ok := x.HeadOf(k); !ok {
			t.Fatalf("index lacks %s", k)
		}
	}
}

// TestDropDuringListing: a listing that began before a change was dropped
// (an event's Drop while a load was reading heads) answers its caller but is
// neither held nor published, so the next call lists the change.
func TestDropDuringListing(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	ix, _ := newStore(t, b, nil, time.Hour)
	var once sync.Once
	b.Before(objstore.OpGetRange, func(ctx context.Context, _ objstoretest.Call) error {
		// The listing is taken; the library changes and is dropped.
		once.Do(func() {
			objstoretest.Put(t, b, keyB, skillMD("b"))
			if err := ix.Drop(ctx, aliceLayer); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	x, err := ix.Get(t.Context(), aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	wantSkills(t, x, keyA)
	x, err = ix.Get(t.Context(), aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	wantSkills(t, x, keyA, keyB)
}

// TestLoadDuringDrop: a load that runs while a Drop deletes the copies
// (it reads the persisted index the Drop is about to delete) keeps
// nothing, so the call after the Drop lists the change.
func TestLoadDuringDrop(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	ix, _ := newStore(t, b, nil, time.Hour)
	x, err := ix.Get(t.Context(), aliceLayer) // lists and persists {a}
	if err != nil {
		t.Fatal(err)
	}
	wantSkills(t, x, keyA)
	objstoretest.Put(t, b, keyB, skillMD("b"))
	var once sync.Once
	b.Before(objstore.OpDelete, func(ctx context.Context, c objstoretest.Call) error {
		if c.Key == aliceLayer.Object {
			once.Do(func() {
				x, err := ix.Get(ctx, aliceLayer)
				if err != nil {
					t.Error(err)
				} else if len(x.Heads) != 1 {
					t.Errorf("the load during the drop read %d skills: it did not read the persisted index, so the test proves nothing", len(x.Heads))
				}
			})
		}
		return nil
	})
	if err := ix.Drop(t.Context(), aliceLayer); err != nil {
		t.Fatal(err)
	}
	x, err = ix.Get(t.Context(), aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	wantSkills(t, x, keyA, keyB)
}

// TestLoadPanicIsAnError: a load that panics (a backend's or a decoder's
// bug) fails the calls waiting for it, not the process, though loads run
// in a goroutine of their own; the next call loads again.
func TestLoadPanicIsAnError(t *testing.T) {
	b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
	panicking := true
	b.Before(objstore.OpList, func(context.Context, objstoretest.Call) error {
		if panicking {
			panic("backend bug")
		}
		return nil
	})
	ix, _ := newStore(t, b, nil, 5*time.Second)
	if _, err := ix.Get(t.Context(), aliceLayer); err == nil || !strings.Contains(err.Error(), "backend bug") {
		t.Fatalf("Get over a panicking listing: %v; want the panic as an error", err)
	}
	panicking = false
	if x, err := ix.Get(t.Context(), aliceLayer); err != nil || len(x.Heads) != 1 {
		t.Fatalf("Get once the listing works: %v", err)
	}
}

// TestJoinAfterDrop: a caller that comes after a Drop returned (an API
// write made, its index dropped) and finds a load of the library under way
// that began before the drop does not take that load's index, which may
// predate the write: it loads again, so a replica serves its own writes to
// the next call (a watch's look, woken by an earlier write, is such a load).
func TestJoinAfterDrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a"), keyB: skillMD("b")}))
		ix, _ := newStore(t, b, nil, time.Hour)
		listed, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		b.Before(objstore.OpPut, func(_ context.Context, c objstoretest.Call) error {
			if c.Key == aliceLayer.Object {
				// The first load has listed and read {a, b}; it publishes.
				once.Do(func() { close(listed); <-release })
			}
			return nil
		})
		go func() {
			if x, err := ix.Get(t.Context(), aliceLayer); err != nil {
				t.Error(err)
			} else {
				wantSkills(t, x, keyA, keyB) // it began before the change: its caller may see either
			}
		}()
		<-listed
		// The write: b deleted, the index dropped; the call returns.
		if err := b.Delete(t.Context(), keyB); err != nil {
			t.Fatal(err)
		}
		if err := ix.Drop(t.Context(), aliceLayer); err != nil {
			t.Fatal(err)
		}
		var (
			got    *Index
			gotErr error
		)
		done := make(chan struct{})
		go func() {
			defer close(done)
			got, gotErr = ix.Get(t.Context(), aliceLayer)
		}()
		synctest.Wait() // the next call waits for the load under way
		close(release)
		<-done
		if gotErr != nil {
			t.Fatal(gotErr)
		}
		wantSkills(t, got, keyA)
		synctest.Wait()
	})
}
