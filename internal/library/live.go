package library

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// A version goes live (publish, rollback, approval) all at once or not at
// all. Under the skill's lock, with the version's blobs and record stored
// and every live key checked, an intent naming the version is written
// before the first live byte: the commit point. The live copy is then
// written detached from the caller (bounded by liveTimeout), latest and the
// labels moved, the index dropped and the intent deleted. An intent a
// crash or an outage left is rolled forward by the next change of the skill
// under its lock and by every replica's recovery pass (Recover), so no live
// copy stays a mix of two versions.

// intent is a version committed to go live, at intentKey until it is.
type intent struct {
	Library layout.LibraryRef `json:"library"`
	Name    string            `json:"name"`
	Version string            `json:"version"`
	Labels  []string          `json:"labels,omitempty"` // moved with latest
	Written time.Time         `json:"written"`
}

// liveTimeout bounds the detached writes of one change, below the lock's
// TTL: a change ends its writes before another replica may take the skill.
const liveTimeout = time.Minute

// lockTTL outlives any change of one skill (16 MiB written, liveTimeout).
const lockTTL = 2 * time.Minute

func (p *Publisher) lockKey(l layout.LibraryRef, name string) string {
	return "library-lock\x00" + p.cfg.Root(l) + name
}

// intentsPrefix is the one prefix every replica's recovery lists: under
// the shared versions root, outside every mount.
func (p *Publisher) intentsPrefix() string { return p.cfg.Roots.Intents() }

func (p *Publisher) intentKey(l layout.LibraryRef, name string) string {
	sum := sha256.Sum256([]byte(p.cfg.Root(l) + "\x00" + name))
	return p.intentsPrefix() + hex.EncodeToString(sum[:20]) + ".json"
}

// liveBase is the key prefix of the folder category/name in the library l,
// checked so that every file of rels fits a key: a write refused for its
// key part-way would leave a mix.
func (p *Publisher) liveBase(l layout.LibraryRef, category, name string, rels []string) (string, error) {
	prefix, err := p.catalog.LibraryPrefix(l)
	if err != nil {
		return "", err
	}
	base := prefix + dir(category, name) + "/"
	for _, rel := range rels {
		if n := len(base) + len(rel); n > objstore.MaxKeyLen {
			return "", fmt.Errorf("%w: file %q would be stored under a key of %d bytes (the library's prefix and folder %q included), over the %d-byte limit of object keys; shorten its path", errkind.InvalidArgument, versions.Clip(rel), n, versions.Clip(base), objstore.MaxKeyLen)
		}
	}
	return base, nil
}

func relsOf(files []skillmd.FileDigest) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Rel
	}
	return out
}

// goLive makes rec (stored, with its blobs) the live copy of its skill and
// moves latest and labels to it, under the skill's lock. It fails only
// before the commit point; what fails after it is logged and finished by
// recovery, and the answer says what will be.
func (p *Publisher) goLive(ctx context.Context, l layout.LibraryRef, rec versions.Record, labels []string, data func(rel string) ([]byte, error)) ([]string, versions.Refs, error) {
	if err := p.checkSigned(l, rec); err != nil {
		return nil, versions.Refs{}, err
	}
	if _, err := p.liveBase(l, rec.Category, rec.Name, relsOf(rec.Files)); err != nil {
		return nil, versions.Refs{}, err
	}
	in := intent{Library: l, Name: rec.Name, Version: rec.ID, Labels: labels, Written: p.now().UTC()}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, versions.Refs{}, err
	}
	// A caller gone before the commit point commits nothing. From it on,
	// the intent's write included (so its answer is never lost to the
	// caller leaving), the change runs to its end whatever the caller does.
	if err := ctx.Err(); err != nil {
		return nil, versions.Refs{}, err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), liveTimeout)
	defer cancel()
	if _, err := p.bucket.Put(dctx, p.intentKey(l, rec.Name), bytes.NewReader(b), int64(len(b)), objstore.PutOptions{}); err != nil {
		return nil, versions.Refs{}, err
	}
	removed, refs, err := p.finish(dctx, in, rec, data)
	if err != nil {
		p.log.Warn("library: a committed change is not wholly live yet; recovery finishes it", "library", p.cfg.Root(l), "skill", rec.Name, "version", rec.ID, "err", err)
		refs = versions.Refs{Labels: map[string]string{versions.Latest: rec.ID}}
		for _, lb := range labels {
			refs.Labels[lb] = rec.ID
		}
	}
	return removed, refs, nil
}

// finish writes the live copy of an intent's version, moves its labels,
// drops the library's index and deletes the intent.
func (p *Publisher) finish(ctx context.Context, in intent, rec versions.Record, data func(rel string) ([]byte, error)) ([]string, versions.Refs, error) {
	removed, err := p.writeLive(ctx, in.Library, rec, data)
	if err != nil {
		return nil, versions.Refs{}, err
	}
	// A name is served from one folder: a category move removes the old.
	if err := p.removeOthers(ctx, in.Library, rec); err != nil {
		return removed, versions.Refs{}, err
	}
	refs, err := p.store(in.Library).UpdateRefs(ctx, in.Name, func(r *versions.Refs) error {
		r.Labels[versions.Latest] = in.Version
		for _, lb := range in.Labels {
			r.Labels[lb] = in.Version
		}
		return nil
	})
	if err != nil {
		return removed, versions.Refs{}, err
	}
	p.indexProvenance(ctx, in.Library, rec)
	// The index is dropped only now, with the live copy whole.
	p.changed(ctx, in.Library)
	key := p.intentKey(in.Library, in.Name)
	var cur intent
	if _, err := (versions.Store{Bucket: p.bucket}).GetJSON(ctx, key, &cur); err == nil && (cur.Version != in.Version || !cur.Written.Equal(in.Written)) {
		return removed, refs, nil // a later change's, unordered with this one (the shared cache down): its own to delete
	}
	return removed, refs, again(ctx, func() error { return p.bucket.Delete(ctx, key) })
}

// again runs op up to three times, a little apart: past the commit point
// a write refused once (a dropped connection, a throttled request) is
// tried again rather than left to recovery.
func again(ctx context.Context, op func() error) error {
	var err error
	for i := range 3 {
		if err = op(); err == nil || errkind.Of(err) == errkind.InvalidArgument {
			return err
		}
		t := time.NewTimer(100 * time.Millisecond << i)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
	return err
}

// writeLive makes rec the library's live copy of its skill: every other
// file first, SKILL.md last, then the files of the previous copy rec does
// not hold are removed. A reader that sees the new SKILL.md finds every
// file it names already written. data returns a file's bytes.
func (p *Publisher) writeLive(ctx context.Context, l layout.LibraryRef, rec versions.Record, data func(rel string) ([]byte, error)) ([]string, error) {
	base, err := p.liveBase(l, rec.Category, rec.Name, relsOf(rec.Files))
	if err != nil {
		return nil, err
	}
	var old []string
	if err := again(ctx, func() error {
		old = old[:0]
		return objstore.Walk(ctx, p.bucket, base, func(o objstore.Object) error {
			old = append(old, strings.TrimPrefix(o.Key, base))
			return nil
		})
	}); err != nil {
		return nil, err
	}
	order := slices.Clone(rec.Files)
	slices.SortStableFunc(order, func(x, y skillmd.FileDigest) int {
		return compareBool(x.Rel == skillmd.SkillFile, y.Rel == skillmd.SkillFile)
	})
	keep := make(map[string]bool, len(order))
	for _, f := range order {
		keep[f.Rel] = true
		b, err := data(f.Rel)
		if err != nil {
			return nil, err
		}
		if err := again(ctx, func() error {
			// The mode recorded with the version (by the shebang rule for a
			// record older than modes) goes with the file.
			_, err := p.bucket.Put(ctx, base+f.Rel, bytes.NewReader(b), int64(len(b)), objstore.PutOptions{Mode: filemode.Of(f.Mode, b)})
			return err
		}); err != nil {
			return nil, err
		}
	}
	var removed []string
	for _, rel := range old {
		if keep[rel] {
			continue
		}
		if err := again(ctx, func() error { return p.bucket.Delete(ctx, base+rel) }); err != nil {
			return removed, err
		}
		removed = append(removed, rel)
	}
	return removed, nil
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// changed drops the library's index, so the next call lists the change,
// and tells the other replicas. The change is made: a failure here (the
// shared cache down) is logged, and the index catches up by revalidation
// (--skills.index-refresh).
func (p *Publisher) changed(ctx context.Context, l layout.LibraryRef) {
	if err := p.catalog.DropLibraryIndex(ctx, l); err != nil {
		p.log.Warn("library: a change is made but the library's index could not be dropped; it is seen once the index revalidates", "library", p.cfg.Root(l), "err", err)
	}
	if p.notify != nil {
		p.notify(ctx, l)
	}
}

// readVersion reads every file of rec from the library's blobs, charged to
// res: a missing blob fails before anything is written.
func (p *Publisher) readVersion(ctx context.Context, l layout.LibraryRef, rec versions.Record, res *versions.Reservation) (map[string][]byte, error) {
	if err := res.Take(ctx, rec.TotalBytes); err != nil {
		return nil, err
	}
	data := make(map[string][]byte, len(rec.Files))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, f := range rec.Files {
		g.Go(func() error {
			b, err := p.blobs.Get(gctx, p.cfg.BlobSpace(l), blobs.Digest(f.SHA256))
			mu.Lock()
			data[f.Rel] = b
			mu.Unlock()
			return err
		})
	}
	return data, g.Wait()
}

// rollForward finishes the change an intent of the skill names, if one is
// left (by a crash, or an outage past the commit point); the caller holds
// the skill's lock. It says whether there was one.
func (p *Publisher) rollForward(ctx context.Context, l layout.LibraryRef, name string) (bool, error) {
	key := p.intentKey(l, name)
	var in intent
	_, err := versions.Store{Bucket: p.bucket}.GetJSON(ctx, key, &in)
	switch {
	case objstore.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	case in.Library != l || in.Name != name:
		return false, fmt.Errorf("library: intent %s names %s of %s, not %s", key, versions.Clip(in.Name), p.cfg.Root(in.Library), name)
	}
	rec, _, err := p.store(l).Record(ctx, name, strings.TrimPrefix(in.Version, "sha256:"))
	if errors.Is(err, errkind.NotFound) {
		// The version is gone (an admin deleted it since it committed):
		// there is nothing to finish it from.
		p.log.Error("library: an intent names a version no longer stored; dropped, the live copy left as it is", "key", key, "version", in.Version)
		return true, p.bucket.Delete(ctx, key)
	}
	if err != nil {
		return false, err
	}
	res := p.budget.Reserve()
	defer res.Release()
	data, err := p.readVersion(ctx, l, rec, res)
	if err != nil {
		return false, err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), liveTimeout)
	defer cancel()
	if _, _, err := p.finish(dctx, in, rec, func(rel string) ([]byte, error) { return data[rel], nil }); err != nil {
		return false, err
	}
	p.log.Info("library: finished an interrupted change", "library", p.cfg.Root(l), "skill", name, "version", in.Version, "committed", in.Written)
	return true, nil
}

// Recover rolls forward every change an intent names, each under its
// skill's lock; a skill whose lock is held is left to the change holding
// it, which rolls forward first. Without the shared cache's locks it
// leaves intents younger than twice liveTimeout, whose writer may be at
// work. It returns how many it finished.
func (p *Publisher) Recover(ctx context.Context) (int, error) {
	n := 0
	err := objstore.Walk(ctx, p.bucket, p.intentsPrefix(), func(o objstore.Object) error {
		var in intent
		_, err := versions.Store{Bucket: p.bucket}.GetJSON(ctx, o.Key, &in)
		switch {
		case objstore.IsNotFound(err):
			return nil
		case err != nil:
			p.log.Warn("library: an intent cannot be read; left", "key", o.Key, "err", err)
			return nil
		case in.Library.Validate() != nil || checkName(in.Name) != nil || o.Key != p.intentKey(in.Library, in.Name):
			p.log.Warn("library: an object under the intents prefix is no intent of this service; left", "key", o.Key)
			return nil
		}
		unlock, ok, err := p.locks.TryLock(ctx, p.lockKey(in.Library, in.Name), lockTTL)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil && p.now().Sub(o.ModTime) < 2*liveTimeout:
			return nil
		case err != nil:
			unlock = func() {}
		case !ok:
			return nil
		}
		defer unlock()
		done, err := p.rollForward(ctx, in.Library, in.Name)
		if err != nil {
			p.log.Warn("library: an interrupted change could not be finished yet", "key", o.Key, "err", err)
		}
		if done {
			n++
		}
		return nil
	})
	return n, err
}

// firstRecoveryTimeout bounds the pass a start waits for: storage down at
// start delays serving this long at most (the next pass tries again).
const firstRecoveryTimeout = 10 * time.Second

// StartRecovery runs Recover once before it returns (a replica started
// after a crash finishes what the crash left before it serves), then
// every --library.recover-every until stop is called (which waits for a
// pass under way).
func (p *Publisher) StartRecovery() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	pass := func() {
		if _, err := p.Recover(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("library: listing interrupted changes", "err", err)
		}
	}
	first, cancelFirst := context.WithTimeout(ctx, firstRecoveryTimeout)
	if _, err := p.Recover(first); err != nil && first.Err() == nil {
		p.log.Warn("library: listing interrupted changes", "err", err)
	}
	cancelFirst()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(p.cfg.RecoverEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pass()
			}
		}
	}()
	return func() { cancel(); <-done }
}
