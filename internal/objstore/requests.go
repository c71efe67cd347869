package objstore

import (
	"context"
	"io"
	"sync/atomic"
)

// Requests counts the storage requests made for one call, by kind, so the
// call can be charged for them after it ends (package quota prices them).
// Requests made with a context derived from the call's, including work it
// led for others (a load joined by concurrent callers runs with
// context.WithoutCancel, which keeps the counter), are counted; it is safe
// for concurrent use.
type Requests struct {
	reads, lists, writes atomic.Int64
}

// RequestCounts is a snapshot of Requests: Reads are Get, GetRange and
// Stat; Lists are List pages; Writes are Put and Delete.
type RequestCounts struct {
	Reads, Lists, Writes int64
}

// Counts returns the requests counted so far; nil counts none.
func (r *Requests) Counts() RequestCounts {
	if r == nil {
		return RequestCounts{}
	}
	return RequestCounts{Reads: r.reads.Load(), Lists: r.lists.Load(), Writes: r.writes.Load()}
}

type requestsKey struct{}

// CountRequests returns a context whose storage requests, on a bucket
// wrapped by WrapWithRequestCounting, are counted in the returned Requests.
// A context already counting gets a counter of its own: the inner call's
// requests are its own, not its caller's too.
func CountRequests(ctx context.Context) (context.Context, *Requests) {
	r := &Requests{}
	return context.WithValue(ctx, requestsKey{}, r), r
}

func requestsFrom(ctx context.Context) *Requests {
	r, _ := ctx.Value(requestsKey{}).(*Requests)
	return r
}

type countingBucket struct{ b Bucket }

// WrapWithRequestCounting counts every request on b in the Requests of its
// context (CountRequests), when there is one. A request is counted when
// made, whatever its outcome: a failed or not-found request cost storage a
// round trip too.
func WrapWithRequestCounting(b Bucket) Bucket { return countingBucket{b: b} }

func count(ctx context.Context, field func(*Requests) *atomic.Int64) {
	if r := requestsFrom(ctx); r != nil {
		field(r).Add(1)
	}
}

func reads(r *Requests) *atomic.Int64  { return &r.reads }
func lists(r *Requests) *atomic.Int64  { return &r.lists }
func writes(r *Requests) *atomic.Int64 { return &r.writes }

func (c countingBucket) Get(ctx context.Context, key string) (io.ReadCloser, Attributes, error) {
	count(ctx, reads)
	return c.b.Get(ctx, key)
}

func (c countingBucket) GetRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, Attributes, error) {
	count(ctx, reads)
	return c.b.GetRange(ctx, key, off, length)
}

func (c countingBucket) Stat(ctx context.Context, key string) (Attributes, error) {
	count(ctx, reads)
	return c.b.Stat(ctx, key)
}

func (c countingBucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts PutOptions) (Attributes, error) {
	count(ctx, writes)
	return c.b.Put(ctx, key, r, size, opts)
}

func (c countingBucket) Delete(ctx context.Context, key string) error {
	count(ctx, writes)
	return c.b.Delete(ctx, key)
}

func (c countingBucket) List(ctx context.Context, opts ListOptions) (ListPage, error) {
	count(ctx, lists)
	return c.b.List(ctx, opts)
}
