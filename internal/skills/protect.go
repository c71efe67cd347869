package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Protected skills: an administrator names skills of the shared library or
// of a team's that no lower layer's skill of the same name or path
// replaces (a user cannot override an approved procedure by uploading a
// namesake). Each library's protected names are one small object outside
// every mount (--skills.shared-protected-key, --skills.team-protected-key),
// listed with the library's index (libindex.Layer.Side): its version is
// part of the index's generation, so a change rebuilds the library's layer
// and every view on it, and is invalidated and told to other replicas as
// a change to the library is. The same object holds the library's scopes
// (scope.go), so they are read, versioned and told to replicas alike.

const (
	maxProtectedNames = 1000
	// The object's bound: the names, and the scopes within their own
	// (maxScopesBytes).
	maxProtectedBytes = 64<<10 + maxScopesBytes
	protectAttempts   = 5
	protectBackoff    = 20 * time.Millisecond
)

// protectedDoc is a protected object's content.
type protectedDoc struct {
	Names  []string   `json:"names"`
	Scopes []ScopeDef `json:"scopes,omitempty"`
}

// protections reads and writes each library's protected names: the
// views read them with the library's index (Layer.Side), this for the
// operator's calls.
type protections struct {
	bucket objstore.Bucket
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
		data, _ := json.Marshal(protectedDoc{Names: names, Scopes: doc.Scopes})
		_, err = p.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if objstore.LostRace(err) {
		return nil, fmt.Errorf("%w: the protected skills changed during %d attempts", errkind.Aborted, protectAttempts)
	}
	return names, err
}

// setScopes applies change to the scopes in the object at key with a
// conditional write, keeping its names, and returns the scopes after.
// change returns the new scopes, or an error to write nothing.
func (p *protections) setScopes(ctx context.Context, key string, change func([]ScopeDef) ([]ScopeDef, error)) ([]ScopeDef, error) {
	var scopes []ScopeDef
	err := objstore.RetryConditional(ctx, protectAttempts, protectBackoff, func() error {
		doc, etag, err := p.load(ctx, key)
		if err != nil {
			return err
		}
		if scopes, err = change(doc.Scopes); err != nil {
			return err
		}
		if err := checkScopes(scopes); err != nil {
			return err
		}
		if doc.Names == nil {
			doc.Names = []string{} // as SetProtected writes it
		}
		data, _ := json.Marshal(protectedDoc{Names: doc.Names, Scopes: scopes})
		_, err = p.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if objstore.LostRace(err) {
		return nil, fmt.Errorf("%w: the library's scopes changed during %d attempts", errkind.Aborted, protectAttempts)
	}
	return scopes, err
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

// protectedOf returns the skills of l whose names it protects.
func protectedOf(l *layer) []*skillRef {
	var out []*skillRef
	for _, n := range l.protected {
		out = append(out, l.named(n)...)
	}
	return out
}

// readSide parses the protected names and the scopes of the layer built from x, the
// library whose Side object is key: read through the file cache, by key and
// ETag, once per version. Protection fails closed: a read that fails is an
// error (the layer is not built, and the next call reads again), and a
// list that is no list (written by other tools) protects every skill of
// the library (all) until an administrator rewrites it; both are logged.
func (vs *views) readSide(ctx context.Context, x *libindex.Index, key string) (protectedDoc, bool, error) {
	i, ok := slices.BinarySearchFunc(x.Objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
	if key == "" || !ok || vs.files == nil {
		return protectedDoc{}, false, nil
	}
	o := x.Objs[i]
	r, _, err := vs.files.Open(ctx, o, 0, maxProtectedBytes+1)
	if err != nil {
		vs.heads.log.WarnContext(ctx, "skills: protected skills not read; the library is not served until they are", "key", key, "err", err)
		return protectedDoc{}, false, fmt.Errorf("reading the protected skills %s: %w", key, err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		vs.heads.log.WarnContext(ctx, "skills: protected skills not read; the library is not served until they are", "key", key, "err", err)
		return protectedDoc{}, false, fmt.Errorf("reading the protected skills %s: %w", key, err)
	}
	var doc protectedDoc
	if len(data) > maxProtectedBytes || json.Unmarshal(data, &doc) != nil || len(doc.Names) > maxProtectedNames {
		vs.heads.log.WarnContext(ctx, "skills: protected skills are no list; every skill of the library is protected until SetSkillProtected rewrites it",
			"key", key, "want", fmt.Sprintf(`{"names": [...]}: at most %d names within %d bytes`, maxProtectedNames, maxProtectedBytes))
		return protectedDoc{}, true, nil
	}
	names := slices.DeleteFunc(doc.Names, func(n string) bool { return !skillmd.ValidName(n) })
	slices.Sort(names)
	doc.Names = slices.Compact(names)
	return doc, false, nil
}

// protectAll is the protected names of a library whose list is no list:
// every name its skills are served by.
func protectAll(l *layer) []string {
	var names []string
	for _, s := range l.names {
		names = append(names, s.name)
	}
	return slices.Compact(names) // l.names is sorted by name
}
