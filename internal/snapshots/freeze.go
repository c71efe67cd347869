package snapshots

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Listed is one library of a caller's view as its index lists it now: the
// layer a pin freezes (its files without their blobs) and the index, whose
// digests spare copying a file whose blob is there.
type Listed struct {
	Layer
	Index *libindex.Index
}

// freeze snapshots every library of the caller's view as src lists it now
// (the user's, each team's, the shared one, with their protected names):
// every file is copied into its library's blob space (a blob already there
// is not copied again) and the snapshot object written. It returns the
// snapshot's sha256.
func (s *Store) freeze(ctx context.Context, id mounts.Caller, src Source) (string, error) {
	libs, err := src.Libraries(ctx, id)
	if err != nil {
		return "", err
	}
	doc := Snapshot{Version: snapshotVersion, User: id.User(), Teams: id.Teams(), Layers: make([]Layer, len(libs))}
	var total int64
	for i, l := range libs {
		for _, f := range l.Files {
			total += f.Size
		}
		doc.Layers[i] = l.Layer
	}
	if total > s.cfg.MaxBytes {
		return "", fmt.Errorf("%w: pinning this library copies %d bytes of skill files, over --library.pin-max-bytes (%d)", errkind.ResourceExhausted, total, s.cfg.MaxBytes)
	}
	for i := range doc.Layers {
		if err := s.copyLayer(ctx, &doc.Layers[i], libs[i].Index); err != nil {
			return "", err
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	_, err = s.bucket.Put(ctx, s.Key(id.User(), hexSum), bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfNoneMatch: true})
	if err != nil && !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, objstore.ErrConflict) {
		return "", err // (a lost create means the same content is there)
	}
	// An old blob written again for this snapshot may have been deleted by
	// a collection that had stat'ed it just before; with the snapshot
	// stored, every later collection keeps its blobs. No pin names a
	// snapshot missing one: the caller tries again, which copies it anew.
	for _, fl := range doc.Layers {
		for _, f := range fl.Files {
			if !f.rewrote {
				continue
			}
			if ok, err := s.blobs.Has(ctx, fl.Space, blobs.Digest(f.Blob)); err != nil || !ok {
				return "", cmp.Or(err, fmt.Errorf("%w: a file's copy was collected while the thread was pinned; try again", errkind.Aborted))
			}
		}
	}
	return hexSum, nil
}

// readFile reads a live file through the file cache (hashing it for the
// index filled it), within the pin's byte bound.
func (s *Store) readFile(ctx context.Context, o objstore.Object) ([]byte, objstore.Attributes, error) {
	rc, a, err := s.files.Open(ctx, o, 0, -1)
	if err != nil {
		return nil, a, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), s.cfg.MaxBytes+1))
	if err == nil && int64(len(data)) > s.cfg.MaxBytes {
		err = fmt.Errorf("%w: a skill file is over --library.pin-max-bytes (%d)", errkind.ResourceExhausted, s.cfg.MaxBytes)
	}
	return data, a, err
}

// copyLayer fills in the blob of each file of fl, copying the files whose
// blob its space lacks. A file the index hashed whose blob is there costs
// nothing: a second thread pinning the same library copies nothing.
func (s *Store) copyLayer(ctx context.Context, fl *Layer, x *libindex.Index) error {
	present, complete, err := s.listSpace(ctx, fl.Space, 4*len(fl.Files)+1024)
	if err != nil {
		return err
	}
	var mu sync.Mutex // present is read and filled by the copies
	// reusable is the ETag of the blob d when the space holds it and it
	// is Fresh; an old one is written again from the file's bytes.
	reusable := func(d string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := present[d]
		return a.ETag, ok && s.blobs.Fresh(a.ModTime)
	}
	sem := semaphore.NewWeighted(pinCopyBytes)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for i := range fl.Files {
		f := &fl.Files[i]
		key := fl.Prefix + f.Rel
		dg, hashed := x.DigestOf(key)
		g.Go(func() error {
			if hashed && int64(dg.Size) == f.Size {
				d := hex.EncodeToString(dg.Sum[:])
				etag, ok := reusable(d)
				if !ok && !complete {
					a, err := s.bucket.Stat(gctx, blobs.Key(fl.Space, blobs.Digest(d)))
					if err != nil && !objstore.IsNotFound(err) {
						return err
					}
					etag, ok = a.ETag, err == nil && s.blobs.Fresh(a.ModTime)
				}
				if ok {
					f.Blob, f.BlobETag, f.Hashed, f.Mode = d, etag, true, dg.Mode
					return nil
				}
			}
			w := min(max(f.Size, 1), pinCopyBytes)
			if err := sem.Acquire(gctx, w); err != nil {
				return err
			}
			defer sem.Release(w)
			data, a, err := s.readFile(gctx, objstore.Object{Key: key, Attributes: objstore.Attributes{Size: f.Size, ETag: f.ETag}})
			if objstore.IsNotFound(err) {
				f.gone = true
				return nil
			}
			if err != nil {
				return err
			}
			// Frozen as read: a file replaced since the listing is frozen
			// with the bytes copied, so the snapshot agrees with itself.
			d := string(blobs.Of(data))
			f.Size, f.ETag, f.Blob, f.Hashed = int64(len(data)), a.ETag, d, hashed
			f.Mode = filemode.Of(a.Mode, data)
			etag, ok := reusable(d)
			if !ok {
				st, err := s.blobs.Put(gctx, fl.Space, data)
				if err != nil {
					return err
				}
				etag, f.rewrote = st.ETag, st.Rewrote
				mu.Lock()
				present[d] = objstore.Attributes{ETag: etag, ModTime: s.Now()}
				mu.Unlock()
			}
			f.BlobETag = etag
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	kept := fl.Files[:0]
	for _, f := range fl.Files {
		if !f.gone {
			kept = append(kept, f)
		}
	}
	fl.Files = kept
	return nil
}

// listSpace returns the blobs of space and their attributes, at most limit of
// them; complete is false when there were more (the rest are then asked
// one by one).
func (s *Store) listSpace(ctx context.Context, space string, limit int) (map[string]objstore.Attributes, bool, error) {
	out := map[string]objstore.Attributes{}
	errFull := errors.New("full")
	err := objstore.Walk(ctx, s.bucket, space+"sha256/", func(o objstore.Object) error {
		if len(out) == limit {
			return errFull
		}
		if d := strings.TrimPrefix(o.Key, space+"sha256/"); blobs.Digest(d).Valid() {
			out[d] = o.Attributes
		}
		return nil
	})
	if errors.Is(err, errFull) {
		return out, false, nil
	}
	return out, err == nil, err
}
