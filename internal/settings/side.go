package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// A library's side object: an administrator names skills of the shared
// library or of a team's that no lower layer's skill of the same name or
// path replaces (a user cannot override an approved procedure by uploading
// a namesake). Each library's protected names are one small object outside
// every mount (--skills.shared-protected-key, --skills.team-protected-key),
// listed with the library's index (libindex.Layer.Side): its version is
// part of the index's generation, so a change rebuilds the library's layer
// and every view on it, and is invalidated and told to other replicas as
// a change to the library is. The same object holds the library's scopes
// (scope.go), so they are read, versioned and told to replicas alike.

const (
	// MaxProtectedNames bounds the names one library protects.
	MaxProtectedNames = 1000
	// MaxSideBytes bounds the object: the names, and the scopes within
	// their own (maxScopesBytes).
	MaxSideBytes    = 64<<10 + maxScopesBytes
	protectAttempts = 5
	protectBackoff  = 20 * time.Millisecond
)

// Side is a side object's content.
type Side struct {
	Names  []string   `json:"names"`
	Scopes []ScopeDef `json:"scopes,omitempty"`
}

// errNoList: a side object that is no list (written by other tools).
var errNoList = errors.New("the protected skills are no list")

// DecodeSide parses a side object, leaving out names that are no skill
// names. An object over the bounds or not of the shape is an error: what it
// protects is the caller's decision (the views protect every skill; the
// operator's calls see none).
func DecodeSide(data []byte) (Side, error) {
	var doc Side
	if len(data) > MaxSideBytes || json.Unmarshal(data, &doc) != nil || len(doc.Names) > MaxProtectedNames {
		return Side{}, errNoList
	}
	doc.Names = slices.DeleteFunc(doc.Names, func(n string) bool { return !skillmd.ValidName(n) })
	return doc, nil
}

// Sides reads and writes each library's side object: the views read it
// with the library's index (Layer.Side), this for the operator's calls.
type Sides struct {
	Bucket objstore.Bucket
}

// Load reads the object at key and its ETag: no object is no protected
// names.
func (p Sides) Load(ctx context.Context, key string) (Side, string, error) {
	r, a, err := p.Bucket.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return Side{}, "", nil
	}
	if err != nil {
		return Side{}, "", err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxSideBytes+1))
	if err != nil {
		return Side{}, "", err
	}
	doc, err := DecodeSide(data)
	if err != nil {
		// Written by other tools: an unreadable list protects nothing
		// rather than failing every call.
		return Side{}, a.ETag, nil
	}
	return doc, a.ETag, nil
}

// SetProtected protects (or unprotects) name in the object at key with a
// conditional write, and returns the names protected after.
func (p Sides) SetProtected(ctx context.Context, key, name string, protect bool) ([]string, error) {
	if !skillmd.ValidName(name) {
		return nil, fmt.Errorf("%w: %q is not a skill name", errkind.InvalidArgument, name)
	}
	var names []string
	err := objstore.RetryConditional(ctx, protectAttempts, protectBackoff, func() error {
		doc, etag, err := p.Load(ctx, key)
		if err != nil {
			return err
		}
		names = slices.Sorted(slices.Values(doc.Names))
		i, found := slices.BinarySearch(names, name)
		switch {
		case found == protect:
			return nil
		case protect && len(names) >= MaxProtectedNames:
			return fmt.Errorf("%w: a library protects at most %d names", errkind.ResourceExhausted, MaxProtectedNames)
		case protect:
			names = slices.Insert(names, i, name)
		default:
			names = slices.Delete(names, i, i+1)
		}
		data, _ := json.Marshal(Side{Names: names, Scopes: doc.Scopes})
		_, err = p.Bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if objstore.LostRace(err) {
		return nil, fmt.Errorf("%w: the protected skills changed during %d attempts", errkind.Aborted, protectAttempts)
	}
	return names, err
}

// SetScopes applies change to the scopes in the object at key with a
// conditional write, keeping its names, and returns the scopes after.
// change returns the new scopes, or an error to write nothing.
func (p Sides) SetScopes(ctx context.Context, key string, change func([]ScopeDef) ([]ScopeDef, error)) ([]ScopeDef, error) {
	var scopes []ScopeDef
	err := objstore.RetryConditional(ctx, protectAttempts, protectBackoff, func() error {
		doc, etag, err := p.Load(ctx, key)
		if err != nil {
			return err
		}
		if scopes, err = change(doc.Scopes); err != nil {
			return err
		}
		if err := CheckScopes(scopes); err != nil {
			return err
		}
		if doc.Names == nil {
			doc.Names = []string{} // as SetProtected writes it
		}
		data, _ := json.Marshal(Side{Names: doc.Names, Scopes: scopes})
		_, err = p.Bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if objstore.LostRace(err) {
		return nil, fmt.Errorf("%w: the library's scopes changed during %d attempts", errkind.Aborted, protectAttempts)
	}
	return scopes, err
}
