package objstoretest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

// NewBucket returns an in-memory bucket holding files (key → content),
// failing the test if one cannot be stored.
func NewBucket(t testing.TB, files map[string]string) *memory.Bucket {
	t.Helper()
	b := memory.New()
	for key, content := range files {
		Put(t, b, key, content)
	}
	return b
}

// Put stores body at key in b, failing the test if it cannot.
func Put(t testing.TB, b objstore.Bucket, key, body string) objstore.Attributes {
	t.Helper()
	a, err := b.Put(t.Context(), key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return a
}

// Get returns the content stored at key in b, failing the test if it
// cannot be read.
func Get(t testing.TB, b objstore.Bucket, key string) string {
	t.Helper()
	rc, _, err := b.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return string(data)
}

// ops are the operation names Faulty knows, the same as the metrics labels.
var ops = []string{objstore.OpGet, objstore.OpGetRange, objstore.OpStat, objstore.OpPut, objstore.OpDelete, objstore.OpList}

// Call is one operation as a Before hook sees it.
type Call struct {
	Op   string               // one of the objstore.Op* names
	Key  string               // the object key; for OpList, the listing prefix
	Put  objstore.PutOptions  // for OpPut
	List objstore.ListOptions // for OpList, MaxKeys as capped by LimitPage
}

type hook struct {
	op string // "" matches every operation
	fn func(ctx context.Context, c Call) error
}

// Faulty wraps a bucket to make chosen operations fail, stall or be
// observed, and counts calls per operation, so a test can check how a code
// path copes with a failing store and how many requests it makes. It is
// safe for concurrent use. Operations are named by objstore.OpGet and its
// siblings.
type Faulty struct {
	b     objstore.Bucket
	calls map[string]*atomic.Int64

	mu       sync.Mutex
	hooks    []hook
	pageSize int
}

var _ objstore.Bucket = (*Faulty)(nil)

// NewFaulty wraps b; until told otherwise it passes every call through.
func NewFaulty(b objstore.Bucket) *Faulty {
	f := &Faulty{b: b, calls: map[string]*atomic.Int64{}}
	for _, op := range ops {
		f.calls[op] = new(atomic.Int64)
	}
	return f
}

// checkOp panics on a misspelt name: a fault that can never fire would let
// the test pass for the wrong reason.
func checkOp(op string) {
	if op != "" && !slices.Contains(ops, op) {
		panic(fmt.Sprintf("objstoretest: unknown operation %q, want one of %q", op, ops))
	}
}

// Fail makes op ("" for every operation) return err, without reaching the
// wrapped bucket, for keys (for List, prefixes) starting with keyPrefix.
func (f *Faulty) Fail(op, keyPrefix string, err error) {
	f.Before(op, func(_ context.Context, c Call) error {
		if strings.HasPrefix(c.Key, keyPrefix) {
			return err
		}
		return nil
	})
}

// Before runs fn ahead of every op call ("" for every operation); a non-nil
// result is returned instead of calling the wrapped bucket. fn may block
// (honouring ctx) to stand in for a slow store, or panic. Hooks run in the
// order added, outside any lock.
func (f *Faulty) Before(op string, fn func(ctx context.Context, c Call) error) {
	checkOp(op)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks = append(f.hooks, hook{op, fn})
}

// LimitPage caps every listing page at n entries (0: no cap), as a store
// may return fewer than asked; tests use it to reach paging code cheaply.
func (f *Faulty) LimitPage(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = n
}

// Heal removes every fault and hook; counters and LimitPage stay.
func (f *Faulty) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks = nil
}

// Calls returns how many times op ("" for all operations) was called,
// including calls failed by a fault.
func (f *Faulty) Calls(op string) int64 {
	checkOp(op)
	if op != "" {
		return f.calls[op].Load()
	}
	var n int64
	for _, c := range f.calls {
		n += c.Load()
	}
	return n
}

// before counts the call and runs the hooks for it.
func (f *Faulty) before(ctx context.Context, c Call) error {
	f.calls[c.Op].Add(1)
	f.mu.Lock()
	hooks := f.hooks
	f.mu.Unlock()
	for _, h := range hooks {
		if h.op != "" && h.op != c.Op {
			continue
		}
		if err := h.fn(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// Get implements objstore.Bucket.
func (f *Faulty) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	if err := f.before(ctx, Call{Op: objstore.OpGet, Key: key}); err != nil {
		return nil, objstore.Attributes{}, err
	}
	return f.b.Get(ctx, key)
}

// GetRange implements objstore.Bucket.
func (f *Faulty) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	if err := f.before(ctx, Call{Op: objstore.OpGetRange, Key: key}); err != nil {
		return nil, objstore.Attributes{}, err
	}
	return f.b.GetRange(ctx, key, offset, length)
}

// Stat implements objstore.Bucket.
func (f *Faulty) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	if err := f.before(ctx, Call{Op: objstore.OpStat, Key: key}); err != nil {
		return objstore.Attributes{}, err
	}
	return f.b.Stat(ctx, key)
}

// Put implements objstore.Bucket.
func (f *Faulty) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	if err := f.before(ctx, Call{Op: objstore.OpPut, Key: key, Put: opts}); err != nil {
		return objstore.Attributes{}, err
	}
	return f.b.Put(ctx, key, r, size, opts)
}

// Delete implements objstore.Bucket.
func (f *Faulty) Delete(ctx context.Context, key string) error {
	if err := f.before(ctx, Call{Op: objstore.OpDelete, Key: key}); err != nil {
		return err
	}
	return f.b.Delete(ctx, key)
}

// List implements objstore.Bucket.
func (f *Faulty) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	f.mu.Lock()
	if n := f.pageSize; n > 0 && (opts.MaxKeys <= 0 || opts.MaxKeys > n) {
		opts.MaxKeys = n
	}
	f.mu.Unlock()
	if err := f.before(ctx, Call{Op: objstore.OpList, Key: opts.Prefix, List: opts}); err != nil {
		return objstore.ListPage{}, err
	}
	return f.b.List(ctx, opts)
}
