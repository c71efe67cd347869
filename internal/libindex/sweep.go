package libindex

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
)

// A sweep lists together the libraries whose background revalidations fell
// due within one wait (Config.SweepWait): one paged LIST over their key
// range instead of one LIST each. Each page starts after the later of the
// last key read and the next waiting library's first possible key, so the
// listing jumps past keys of no waiting library (another user's workspace,
// a library not due). A sweep therefore costs at most what listing each
// library alone costs (a page ends in a library or past it), and, where the
// libraries' keys lie close together (users' libraries in a bucket that
// holds mostly libraries, or a mount template that puts them all under one
// prefix), a page per 1,000 objects of theirs instead of a LIST per
// library. Without events, where every library in use is listed once per
// interval, that is what storage requests follow.
type sweeper struct {
	bucket     objstore.Bucket
	wait       time.Duration
	maxObjects int
	pageSize   int // objects per LIST; 0 is objstore.DefaultMaxKeys (tests page small)
	metrics    *Metrics
	now        func() time.Time // the store's clock

	mu     sync.Mutex
	queued []*sweepItem // waiting for the next sweep
}

// sweepChunk is how many libraries one goroutine of a sweep lists: where
// they lie far apart, each costs a LIST of its own, and a chunk's LISTs run
// one after the other, so a sweep of thousands of scattered libraries still
// ends well within the refresh interval.
const sweepChunk = 64

// sweepItem is one library waiting for a sweep, and what it found.
type sweepItem struct {
	prefix    string
	objs      []objstore.Object
	truncated bool // more than maxObjects objects: objs holds the first
	err       error
	done      chan struct{}
	started   time.Time // when its sweep began listing
	swept     int       // libraries of its sweep
}

// list returns the objects under prefix (at most maxObjects; truncated when
// there were more), listed by the next sweep, which began at started and
// listed swept libraries.
func (s *sweeper) list(ctx context.Context, prefix string) (objs []objstore.Object, truncated bool, started time.Time, swept int, err error) {
	it := &sweepItem{prefix: prefix, done: make(chan struct{})}
	s.mu.Lock()
	s.queued = append(s.queued, it)
	if len(s.queued) == 1 {
		time.AfterFunc(s.wait, s.run)
	}
	s.mu.Unlock()
	select {
	case <-it.done:
		return it.objs, it.truncated, it.started, it.swept, it.err
	case <-ctx.Done():
		return nil, false, time.Time{}, 0, ctx.Err()
	}
}

// run lists every library queued.
func (s *sweeper) run() {
	s.mu.Lock()
	items := s.queued
	s.queued = nil
	s.mu.Unlock()
	// Detached from the callers: each waits on its own context, and a
	// sweep serves them all.
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	s.metrics.SweptLibraries.Observe(float64(len(items)))
	slices.SortFunc(items, func(a, b *sweepItem) int { return strings.Compare(a.prefix, b.prefix) })
	// A library that is not a folder, or lies inside the one before it
	// (never with the catalog's layers), is listed alone.
	var swept, alone []*sweepItem
	for i, it := range items {
		if !strings.HasSuffix(it.prefix, "/") || (len(swept) > 0 && strings.HasPrefix(it.prefix, swept[len(swept)-1].prefix)) {
			alone = append(alone, it)
			continue
		}
		swept = append(swept, items[i])
	}
	started := s.now()
	var wg sync.WaitGroup
	for chunk := range slices.Chunk(swept, sweepChunk) {
		wg.Go(func() { s.guarded(ctx, chunk) })
	}
	for _, it := range alone {
		wg.Go(func() { s.guarded(ctx, []*sweepItem{it}) })
	}
	wg.Wait()
	for _, it := range items {
		it.started, it.swept = started, len(items)
		close(it.done)
	}
}

// guarded is sweep with a panic made the error of every library it left
// (their revalidations fail; the indexes are served as they were).
func (s *sweeper) guarded(ctx context.Context, libs []*sweepItem) {
	if err := panics.Guard(func() error { s.sweep(ctx, libs); return nil })(); err != nil {
		for _, it := range libs {
			if it.err == nil {
				it.objs, it.err = nil, err
			}
		}
	}
}

var errEmptyPage = errors.New("libindex: a listing page with a next page but no object")

// sweep lists libs, sorted by prefix, none inside another (a library alone
// may be any prefix).
func (s *sweeper) sweep(ctx context.Context, libs []*sweepItem) {
	opts := objstore.ListOptions{MaxKeys: s.pageSize}
	i := 0
	for {
		// Each page stays within what the libraries left share, so that
		// the last one's page ends with it, as its own listing's would.
		opts.Prefix = sharedPrefix(libs[i].prefix, libs[len(libs)-1].prefix)
		opts.StartAfter = max(opts.StartAfter, before(libs[i].prefix))
		page, err := s.bucket.List(ctx, opts)
		if err == nil && page.NextToken != "" && len(page.Objects) == 0 {
			err = errEmptyPage // no key to go on after: never from S3 without a delimiter
		}
		if err != nil {
			for _, it := range libs[i:] {
				it.err = err
			}
			return
		}
		for _, o := range page.Objects {
			// A key past libs[i]'s (greater, without its prefix) is past
			// all of them: libs[i] is complete.
			for i < len(libs) && o.Key > libs[i].prefix && !strings.HasPrefix(o.Key, libs[i].prefix) {
				i++
			}
			if i == len(libs) {
				return
			}
			it := libs[i]
			switch {
			case !strings.HasPrefix(o.Key, it.prefix):
				// Before libs[i]: a key of no library waiting.
			case len(it.objs) == s.maxObjects:
				it.truncated = true
			default:
				it.objs = append(it.objs, o)
			}
		}
		if page.NextToken == "" {
			return // the listing ended: every library is complete
		}
		opts.StartAfter = page.Objects[len(page.Objects)-1].Key
		if libs[i].truncated {
			if i == len(libs)-1 {
				return
			}
			// Several libraries are folders (run): skip the rest of this one.
			opts.StartAfter = max(opts.StartAfter, beyond(libs[i].prefix))
		}
	}
}

// before is the StartAfter that lists prefix's keys first: each of them is
// greater than prefix less its last byte. beyond is the StartAfter that
// skips the rest of a folder's keys: each of them is less than the folder
// with its "/" made "0".
func before(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix[:len(prefix)-1]
}

func beyond(prefix string) string {
	return prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
}

// sharedPrefix is the longest prefix a and b share.
func sharedPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}
