package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Protected skills: an administrator names skills of the shared library or
// of a team's that no lower layer's skill of the same name or path
// replaces (a user cannot override an approved procedure by uploading a
// namesake). Each library's protected names are one small object outside
// every mount (--skills.shared-protected-key, --skills.team-protected-key),
// read with the library's index and kept for --skills.index-refresh.

const (
	maxProtectedNames = 1000
	maxProtectedBytes = 64 << 10
	protectAttempts   = 5
	protectBackoff    = 20 * time.Millisecond
)

// protectedDoc is a protected object's content.
type protectedDoc struct {
	Names []string `json:"names"`
}

// protectedSet is one library's protected names as read at a time.
type protectedSet struct {
	names []string // sorted
	hash  uint64   // of names: a base layer's generation includes it
	read  time.Time
}

func (p protectedSet) has(name string) bool {
	_, ok := slices.BinarySearch(p.names, name)
	return ok
}

// protections reads and keeps each library's protected names.
type protections struct {
	bucket objstore.Bucket
	ttl    time.Duration
	mu     sync.Mutex
	sets   map[string]protectedSet // by object key
	flight singleflight.Group
}

func newProtections(b objstore.Bucket, ttl time.Duration) *protections {
	return &protections{bucket: b, ttl: ttl, sets: map[string]protectedSet{}}
}

// get returns the names protected by the object at key, read again when
// older than the refresh interval; the last read is served while storage
// fails.
func (p *protections) get(ctx context.Context, key string) (protectedSet, error) {
	if p == nil {
		return protectedSet{}, nil
	}
	p.mu.Lock()
	s, ok := p.sets[key]
	p.mu.Unlock()
	if ok && time.Since(s.read) < p.ttl {
		return s, nil
	}
	v, err, _ := p.flight.Do(key, func() (any, error) {
		doc, _, err := p.load(context.WithoutCancel(ctx), key)
		if err != nil {
			return nil, err
		}
		s := newProtectedSet(doc.Names)
		p.mu.Lock()
		p.sets[key] = s
		p.mu.Unlock()
		return s, nil
	})
	if err != nil {
		if ok {
			return s, nil
		}
		return protectedSet{}, err
	}
	return v.(protectedSet), nil
}

func newProtectedSet(names []string) protectedSet {
	s := protectedSet{names: slices.Compact(slices.Sorted(slices.Values(names))), read: time.Now()}
	if len(s.names) > 0 {
		h := sha256.Sum256([]byte(strings.Join(s.names, "\n")))
		s.hash = binary.BigEndian.Uint64(h[:])
	}
	return s
}

// load reads the object at key: no object is no protected names.
func (p *protections) load(ctx context.Context, key string) (protectedDoc, string, error) {
	r, a, err := p.bucket.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return protectedDoc{}, "", nil
	}
	if err != nil {
		return protectedDoc{}, "", err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxProtectedBytes+1))
	if err != nil {
		return protectedDoc{}, "", err
	}
	var doc protectedDoc
	if len(data) > maxProtectedBytes || json.Unmarshal(data, &doc) != nil || len(doc.Names) > maxProtectedNames {
		// Written by other tools: an unreadable list protects nothing
		// rather than failing every call.
		return protectedDoc{}, a.ETag, nil
	}
	doc.Names = slices.DeleteFunc(doc.Names, func(n string) bool { return !skillmd.ValidName(n) })
	return doc, a.ETag, nil
}

// forget drops the kept copy of key, so the next call reads it again.
func (p *protections) forget(key string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.sets, key)
	p.mu.Unlock()
}

// forgetAll drops every kept copy.
func (p *protections) forgetAll() {
	if p == nil {
		return
	}
	p.mu.Lock()
	clear(p.sets)
	p.mu.Unlock()
}

// set protects (or unprotects) name in the object at key with a
// conditional write, and returns the names protected after.
func (p *protections) set(ctx context.Context, key, name string, protect bool) ([]string, error) {
	if !skillmd.ValidName(name) {
		return nil, fmt.Errorf("%w: %q is not a skill name", errkind.InvalidArgument, name)
	}
	var names []string
	err := objstore.RetryConditional(ctx, protectAttempts, protectBackoff, func() error {
		doc, etag, err := p.load(ctx, key)
		if err != nil {
			return err
		}
		names = slices.Sorted(slices.Values(doc.Names))
		i, found := slices.BinarySearch(names, name)
		switch {
		case found == protect:
			return nil
		case protect && len(names) >= maxProtectedNames:
			return fmt.Errorf("%w: a library protects at most %d names", errkind.ResourceExhausted, maxProtectedNames)
		case protect:
			names = slices.Insert(names, i, name)
		default:
			names = slices.Delete(names, i, i+1)
		}
		data, _ := json.Marshal(protectedDoc{Names: names})
		_, err = p.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if objstore.LostRace(err) {
		return nil, fmt.Errorf("%w: the protected skills changed during %d attempts", errkind.Aborted, protectAttempts)
	}
	p.forget(key)
	return names, err
}

// protectedLayer is a layer of the given skills (protected ones of lower
// layers), the first of a folder kept: composed over a higher layer with
// its names, it shadows that layer's folders at their paths, and its
// skills come first for their names (lookups order "shared" and "team:"
// before "user", and the shared library's before a team's).
func protectedLayer(refs []*skillRef) *layer {
	slices.SortStableFunc(refs, func(a, b *skillRef) int { return strings.Compare(a.dir, b.dir) })
	refs = slices.CompactFunc(refs, func(a, b *skillRef) bool { return a.dir == b.dir })
	l := &layer{all: refs}
	for _, s := range refs {
		l.entries = append(l.entries, s.files...)
	}
	slices.SortFunc(l.entries, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	l.lookups(refs)
	return l
}

// protectedOf returns the skills of l whose names are in set.
func protectedOf(l *layer, set protectedSet) []*skillRef {
	var out []*skillRef
	for _, n := range set.names {
		out = append(out, l.named(n)...)
	}
	return out
}
