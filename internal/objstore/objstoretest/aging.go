package objstoretest

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Aging is a bucket over a real one whose objects can be made to look old:
// a key Age names reports its ModTime that much earlier (Stat, Get, List)
// until it is written again through Aging. Tests of what depends on an
// object's age (garbage collection's grace) use it on every backend, where
// ModTime is the storage's own clock.
type Aging struct {
	objstore.Bucket

	mu   sync.Mutex
	by   map[string]time.Duration
	hook func(op, key string)
}

// Hook sets f (nil: none) to run after each List page is read and before
// it is returned (op "list", key the prefix) and before each Put (op
// "put"): a test's way to act between a listing and what its caller does
// with it, or just before a write.
func (a *Aging) Hook(f func(op, key string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hook = f
}

func (a *Aging) run(op, key string) {
	a.mu.Lock()
	f := a.hook
	a.mu.Unlock()
	if f != nil {
		f(op, key)
	}
}

// NewAging wraps b.
func NewAging(b objstore.Bucket) *Aging { return &Aging{Bucket: b, by: map[string]time.Duration{}} }

// Age makes key look d older than it is.
func (a *Aging) Age(key string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.by[key] = d
}

func (a *Aging) shift(key string, at objstore.Attributes) objstore.Attributes {
	a.mu.Lock()
	defer a.mu.Unlock()
	at.ModTime = at.ModTime.Add(-a.by[key])
	return at
}

func (a *Aging) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	rc, at, err := a.Bucket.Get(ctx, key)
	return rc, a.shift(key, at), err
}

func (a *Aging) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	rc, at, err := a.Bucket.GetRange(ctx, key, offset, length)
	return rc, a.shift(key, at), err
}

func (a *Aging) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	at, err := a.Bucket.Stat(ctx, key)
	return a.shift(key, at), err
}

func (a *Aging) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	a.run("put", key)
	at, err := a.Bucket.Put(ctx, key, r, size, opts)
	if err == nil {
		a.mu.Lock()
		delete(a.by, key) // written now: as young as it is
		a.mu.Unlock()
	}
	return at, err
}

func (a *Aging) Delete(ctx context.Context, key string) error {
	err := a.Bucket.Delete(ctx, key)
	a.mu.Lock()
	delete(a.by, key)
	a.mu.Unlock()
	return err
}

func (a *Aging) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	page, err := a.Bucket.List(ctx, opts)
	for i, o := range page.Objects {
		page.Objects[i].Attributes = a.shift(o.Key, o.Attributes)
	}
	if err == nil {
		a.run("list", opts.Prefix)
	}
	return page, err
}
