package provindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

const key = "_versions/alice/provenance.json"

// refusing is a bucket that refuses conditional writes while refuse says
// so (as a store that is down does), tells attempts of each one, and may
// hold them at gate.
type refusing struct {
	objstore.Bucket
	mu       sync.Mutex
	refuse   func(n int) bool // the n-th conditional write (from 1) is refused
	puts     int
	attempts chan time.Time // each conditional write's time, when set
	gate     chan struct{}  // when set, each conditional write waits for it
}

func (b *refusing) Put(ctx context.Context, k string, r io.Reader, size int64, o objstore.PutOptions) (objstore.Attributes, error) {
	if o.IfMatch == "" && !o.IfNoneMatch {
		return b.Bucket.Put(ctx, k, r, size, o)
	}
	if b.gate != nil {
		<-b.gate
	}
	b.mu.Lock()
	b.puts++
	refused := b.refuse != nil && b.refuse(b.puts)
	b.mu.Unlock()
	if b.attempts != nil {
		b.attempts <- time.Now()
	}
	if refused {
		return objstore.Attributes{}, errors.New("storage unavailable")
	}
	return b.Bucket.Put(ctx, k, r, size, o)
}

func (b *refusing) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.puts
}

// stored reads the index in the bucket itself.
func stored(t *testing.T, b objstore.Bucket) map[string]Entry {
	t.Helper()
	rc, _, err := b.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var f file
	if err := json.NewDecoder(rc).Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f.Skills
}

func entry(v string) Entry {
	return Entry{Digest: "sha256:" + v, Provenance: Provenance{Version: "sha256:" + v, Publisher: "alice", ScanVerdict: "clean", Signature: "unsigned"}}
}

// TestKeptChangeRetried: a change whose write the store refuses is kept
// and written again in the background, merged with a change queued
// meanwhile (tried at once), after a backoff doubling from 1s (2s, 4s, 8s
// after the second failure; never sooner) until it lands; the replica's
// copy then holds both, with no read. A store that refuses every write
// loses the kept change only at Close, after one more try, counted.
func TestKeptChangeRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := &refusing{Bucket: memory.New(), refuse: func(n int) bool { return n <= 4 }, attempts: make(chan time.Time, 16)}
		reg := prometheus.NewRegistry()
		x := New(b, Options{Registerer: reg})
		defer x.Close()
		start := time.Now()
		if err := x.Set(ctx, key, "pdf", entry("a")); !errors.Is(err, ErrKept) {
			t.Fatalf("Set with the store refusing = %v, want ErrKept", err)
		}
		<-b.attempts
		// A change of another skill while the first is kept, with no
		// caller waiting on the retry: it is tried at once, and fails.
		if err := x.Set(ctx, key, "xlsx", entry("b")); !errors.Is(err, ErrKept) {
			t.Fatalf("second Set = %v, want ErrKept", err)
		}
		<-b.attempts
		var at []time.Duration
		for range 3 { // the third retry lands
			at = append(at, (<-b.attempts).Sub(start))
		}
		synctest.Wait()
		if want := []time.Duration{2 * time.Second, 6 * time.Second, 14 * time.Second}; fmt.Sprint(at) != fmt.Sprint(want) {
			t.Errorf("retries at %v, want %v", at, want)
		}
		got := stored(t, b.Bucket)
		if len(got) != 2 || got["pdf"] != entry("a") || got["xlsx"] != entry("b") {
			t.Errorf("stored index %v, want pdf and xlsx", got)
		}
		if idx, err := x.Get(ctx, key); err != nil || len(idx) != 2 {
			t.Errorf("the replica's copy = %v, %v", idx, err)
		}
		if n := testutil.ToFloat64(x.writes.WithLabelValues("kept")); n != 4 {
			t.Errorf("writes kept = %v, want 4", n)
		}

		// Refused for good: kept until Close, which tries once more.
		b.mu.Lock()
		b.refuse = func(int) bool { return true }
		b.mu.Unlock()
		if err := x.Set(ctx, key, "docx", entry("c")); !errors.Is(err, ErrKept) {
			t.Fatalf("Set = %v, want ErrKept", err)
		}
		<-b.attempts
		x.Close()
		<-b.attempts
		if n := testutil.ToFloat64(x.dropped); n != 1 {
			t.Errorf("dropped = %v, want 1 (the kept docx)", n)
		}
		if _, ok := stored(t, b.Bucket)["docx"]; ok {
			t.Error("docx stored with the store refusing")
		}
	})
}

// TestBurstBatched: 32 changes of one index made while its write is under
// way go into one next write: 2 conditional writes, not 32, and every
// change lands.
func TestBurstBatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		b := &refusing{Bucket: memory.New(), gate: gate}
		x := New(b, Options{})
		defer x.Close()
		const n = 33
		var wg sync.WaitGroup
		errs := make(chan error, n)
		set := func(i int) { errs <- x.Set(context.Background(), key, fmt.Sprintf("s%02d", i), entry(fmt.Sprint(i))) }
		wg.Go(func() { set(0) })
		synctest.Wait() // the first write waits at the gate
		for i := 1; i < n; i++ {
			wg.Go(func() { set(i) })
		}
		synctest.Wait()
		close(gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := b.count(); got != 2 {
			t.Errorf("%d conditional writes for %d changes, want 2", got, n)
		}
		if got := stored(t, b.Bucket); len(got) != n {
			t.Errorf("stored %d entries, want %d", len(got), n)
		}
	})
}

// TestRepair: a listing's ask returns at once and is looked up in the
// background; an out-of-band copy is not looked up again, a found entry is
// written, and an entry the index names is not looked up.
func TestRepair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &refusing{Bucket: memory.New()}
		x := New(b, Options{})
		defer x.Close()
		var lookups atomic.Int32
		found := func(ok bool) Look {
			return func(context.Context) (Entry, bool, error) { lookups.Add(1); return entry("a"), ok, nil }
		}
		// The ask returns before anything is read: the lookup is held here.
		held := make(chan struct{})
		x.Repair(key, "held", "sha256:h", func(context.Context) (Entry, bool, error) { <-held; return Entry{}, false, nil })
		synctest.Wait()
		if b.count() != 0 {
			t.Fatal("written before the lookup")
		}
		close(held)
		x.Repair(key, "notes", "sha256:z", found(false))
		synctest.Wait()
		x.Repair(key, "notes", "sha256:z", found(false))
		synctest.Wait()
		looks := lookups.Load()
		if looks != 1 || b.count() != 0 {
			t.Errorf("out of band: %d lookups, %d writes; want 1, 0", looks, b.count())
		}
		x.Repair(key, "pdf", "sha256:a", found(true))
		synctest.Wait()
		looks = lookups.Load()
		if got := stored(t, b.Bucket); got["pdf"] != entry("a") || looks != 2 {
			t.Errorf("repaired index %v after %d lookups", got, looks)
		}
		x.Repair(key, "pdf", "sha256:a", found(true)) // named now: read, not looked up
		synctest.Wait()
		looks = lookups.Load()
		if looks != 2 || b.count() != 1 {
			t.Errorf("named: %d lookups, %d writes; want 2, 1", looks, b.count())
		}
	})
}

// TestKeptBounded: at most maxKept indexes wait for a retry; a change of
// one more is given up at once (its caller told, counted), and Close
// gives up, counted, what still fails.
func TestKeptBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &refusing{Bucket: memory.New(), refuse: func(int) bool { return true }}
		x := New(b, Options{})
		for i := range maxKept {
			if err := x.Set(t.Context(), fmt.Sprintf("lib%d/provenance.json", i), "pdf", entry("a")); !errors.Is(err, ErrKept) {
				t.Fatalf("Set %d = %v, want ErrKept", i, err)
			}
		}
		if err := x.Set(t.Context(), "one-more/provenance.json", "pdf", entry("a")); err == nil || errors.Is(err, ErrKept) {
			t.Fatalf("Set past maxKept = %v, want the store's error, not kept", err)
		}
		if n := testutil.ToFloat64(x.dropped); n != 1 {
			t.Errorf("dropped = %v, want 1", n)
		}
		x.Close()
		if n := testutil.ToFloat64(x.dropped); n != maxKept+1 {
			t.Errorf("dropped after Close = %v, want %d", n, maxKept+1)
		}
	})
}

// readCounting counts the reads of the index at key.
type readCounting struct {
	objstore.Bucket
	reads atomic.Int32
}

func (b *readCounting) Get(ctx context.Context, k string) (io.ReadCloser, objstore.Attributes, error) {
	if k == key {
		b.reads.Add(1)
	}
	return b.Bucket.Get(ctx, k)
}

// TestRepairsShareARead: the asks of one index waiting while a repair runs
// are made with one read of it (a library's skills copied into the bucket
// are met, and asked for, together), each still looked up.
func TestRepairsShareARead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &readCounting{Bucket: memory.New()}
		x := New(b, Options{})
		defer x.Close()
		held := make(chan struct{})
		x.Repair(key, "held", "sha256:h", func(context.Context) (Entry, bool, error) { <-held; return Entry{}, false, nil })
		synctest.Wait()
		var lookups atomic.Int32
		for i := range 3 {
			x.Repair(key, fmt.Sprintf("copied-%d", i), "sha256:c", func(context.Context) (Entry, bool, error) { lookups.Add(1); return Entry{}, false, nil })
		}
		close(held)
		synctest.Wait()
		if got, looks := b.reads.Load(), lookups.Load(); got != 2 || looks != 3 {
			t.Errorf("%d reads of the index and %d lookups for a repair and 3 asks waiting behind it; want 2 and 3", got, looks)
		}
	})
}
