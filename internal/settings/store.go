package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sync/singleflight"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// User is a user's stored settings. They live outside every mount so a
// worker cannot edit them as a file and `aws s3 sync --delete` of a
// library does not wipe them.
type User struct {
	Disabled []string `json:"disabled"` // skill names
	// Scopes are the user's own scopes (scope.go), nearest of any of
	// the name for the user's calls.
	Scopes []ScopeDef `json:"scopes,omitempty"`
}

// cachedSettings is a user's settings as the shared cache holds them. It
// names the user, so a value under another user's key (a copied key, a bug)
// is refused instead of applied.
type cachedSettings struct {
	Owner string `json:"user"`
	User
}

// errOtherUser: cached settings that name another user.
var errOtherUser = errors.New("settings of another user")

// decodeSettings reads a value stored by Store.store for user. A
// value that names no user (written before values named theirs) or cannot
// be read is a miss; one that names another user is errOtherUser.
func decodeSettings(b []byte, user string) (User, error) {
	var c cachedSettings
	if err := json.Unmarshal(b, &c); err != nil {
		return User{}, err
	}
	switch c.Owner {
	case user:
		return c.User, nil
	case "":
		return User{}, errors.New("cached settings name no user")
	}
	return User{}, fmt.Errorf("%w: %q, not %q", errOtherUser, c.Owner, user)
}

// DisabledSet is the names of the skills the user disabled.
func (s User) DisabledSet() map[string]bool {
	m := make(map[string]bool, len(s.Disabled))
	for _, n := range s.Disabled {
		m[n] = true
	}
	return m
}

// Settings writes are rare; these bound their retries under contention.
const (
	settingsAttempts = 21
	settingsBackoff  = 5 * time.Millisecond
	maxSettingsBytes = 1 << 20
	// settingsLockTTL bounds how long one replica may hold a user's
	// settings lock; settingsLockWait how long a writer waits for it.
	settingsLockTTL  = 5 * time.Second
	settingsLockWait = 2 * time.Second
)

// Store reads and updates each user's settings object, cached in
// the shared cache (when ttl > 0) so a catalog call costs no storage
// request. Writes go through the cache: a change is the next read of every
// replica. Writers and the readers that fill a miss hold one lock per user
// in the shared cache, so an old value read from storage can never be
// stored over a newer one.
type Store struct {
	bucket   objstore.Bucket
	shared   cache.Cache // the level every replica sees
	ttl      time.Duration
	key      func(user string) string // the user's settings object
	cacheLog *libindex.CacheLog
	metrics  *libindex.Metrics
	flight   singleflight.Group

	// local keeps each user's decoded settings in process for localTTL
	// (with Redis; 0 without, when the cache is in process anyway), so a
	// call costs no round trip to the shared cache. A change made through
	// this replica is its next read (update and forget drop the copy, and
	// a read that began before a change keeps nothing); one made through
	// another replica is dropped here when the replicas' topic says so
	// (skills.Catalog.Forget calls DropLocal), milliseconds later. localTTL bounds a copy should
	// that message be lost: the library's own bound on a change skillsvc
	// is not told of (--skills.index-max-stale), at least the in-process
	// cache's (--cache.lru.max-ttl). Shorter, a replica serving thousands
	// of users would ask Redis on most calls.
	//
	// Every copy also keeps the bytes it was decoded from: a read of the
	// shared cache that finds the same bytes takes the copy instead of
	// decoding them again (with the in-process cache only, which keeps no
	// copy for a time, every call reads it).
	local    *cache.Shelf[*localSettings]
	localTTL time.Duration
	localMu  sync.Mutex
	changes  uint64 // updates and forgets so far, under localMu

	// Now is the clock the copies held in process age by.
	Now func() time.Time
}

// localSettings are a user's settings as read at a time, and the cached
// bytes they were decoded from (nil: read from storage).
type localSettings struct {
	s   User
	at  time.Time
	raw []byte
}

// HeldKind is the kind of the settings on the held budget.
const HeldKind = "settings"

// localSettingsBytes estimates the heap a localSettings keeps alive, its
// strings aside (as skills' held estimates are made).
var localSettingsBytes = cache.AllocBytes(int(unsafe.Sizeof(localSettings{})))

// NewStore returns the store of the users' settings objects, each at
// key(user) (the bucket layout's), cached in c for ttl (0: read from storage every call) and
// held decoded in process within held, for maxStale at least.
func NewStore(bucket objstore.Bucket, c cache.Cache, ttl, maxStale time.Duration, key func(user string) string, held *cache.Held, cl *libindex.CacheLog, m *libindex.Metrics) *Store {
	st := &Store{bucket: bucket, shared: cache.Shared(c), ttl: ttl, key: key, cacheLog: cl, metrics: m, Now: time.Now}
	if ttl > 0 {
		if local := cache.LocalTTL(c); local > 0 {
			st.localTTL = min(max(local, maxStale), ttl)
		}
		st.local = cache.NewShelf[*localSettings](held, HeldKind)
	}
	return st
}

// heldBytes estimates the heap l keeps alive (and its key on the budget).
func (l *localSettings) heldBytes(user string) int64 {
	n := 2*cache.AllocBytes(len(user)) + localSettingsBytes + cache.AllocBytes(16*cap(l.s.Disabled)) + cache.AllocBytes(len(l.raw))
	for _, name := range l.s.Disabled {
		n += cache.AllocBytes(len(name))
	}
	return n
}

// Get returns the caller's settings.
func (st *Store) Get(ctx context.Context, id mounts.Caller) (User, error) {
	if st.ttl <= 0 {
		s, _, err := st.load(ctx, id.User())
		return s, err
	}
	at := st.Now()
	if l, ok := st.local.Get(id.User()); ok && st.localTTL > 0 && at.Sub(l.at) < st.localTTL {
		return l.s, nil
	}
	st.localMu.Lock()
	since := st.changes
	st.localMu.Unlock()
	s, raw, err := st.getShared(ctx, id)
	if err != nil {
		return s, err
	}
	if st.localTTL <= 0 && raw == nil {
		return s, nil // kept only as the decoding of cached bytes
	}
	st.localMu.Lock()
	defer st.localMu.Unlock()
	if st.changes == since {
		l := &localSettings{s: s, at: at, raw: raw}
		st.local.Add(id.User(), l, l.heldBytes(id.User()))
	}
	return s, nil
}

// decoded returns the user's settings as decoded from b before, if this
// process keeps them: the same cached bytes decode to the same settings.
func (st *Store) decoded(user string, b []byte) (User, bool) {
	if l, ok := st.local.Get(user); ok && l.raw != nil && bytes.Equal(l.raw, b) {
		return l.s, true
	}
	return User{}, false
}

// DropLocal forgets this process's copy of the user's settings, after a
// change: a read under way when it runs keeps nothing it read.
func (st *Store) DropLocal(user string) {
	if st.local == nil {
		return
	}
	st.localMu.Lock()
	defer st.localMu.Unlock()
	st.changes++
	st.local.Remove(user)
}

// DropAllLocal forgets this process's copies of every user's settings.
func (st *Store) DropAllLocal() {
	if st.local == nil {
		return
	}
	st.localMu.Lock()
	defer st.localMu.Unlock()
	st.changes++
	st.local.Purge()
}

// getShared returns the user's settings from the shared cache, filling it
// from storage on a miss, and the cached bytes they were decoded from (nil
// when read from storage).
func (st *Store) getShared(ctx context.Context, id mounts.Caller) (User, []byte, error) {
	ckey := CacheKey(id.User())
	hits, err := st.shared.Fetch(ctx, []string{ckey})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return User{}, nil, cerr
		}
		st.cacheLog.Failed(ctx, "fetching skill settings", err)
	}
	if b, ok := hits[ckey]; ok {
		if s, ok := st.decoded(id.User(), b); ok {
			return s, b, nil
		}
		s, err := decodeSettings(b, id.User())
		if err == nil {
			return s, b, nil
		}
		if errors.Is(err, errOtherUser) {
			// Read from storage below, and stored over it.
			st.metrics.Mismatched.WithLabelValues(libindex.KindSettings, libindex.SourceSharedCache).Inc()
			st.cacheLog.Mismatched(ctx, libindex.KindSettings, libindex.SourceSharedCache, id.User(), err)
		}
	}
	ch := st.flight.DoChan(id.User(), panics.GuardValue(func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		defer cancel()
		// A load that just ended may have filled the cache after this
		// caller missed it.
		if hits, err := st.shared.Fetch(fctx, []string{ckey}); err == nil {
			if b, ok := hits[ckey]; ok {
				if s, err := decodeSettings(b, id.User()); err == nil {
					return s, nil
				}
			}
		}
		// Fill the cache only under the lock: a writer holds it from its
		// write until its value is cached.
		unlock, locked, _ := st.shared.TryLock(fctx, settingsLockKey(id.User()), settingsLockTTL)
		s, _, err := st.load(fctx, id.User())
		if err != nil || !locked {
			return s, err
		}
		defer unlock()
		st.store(fctx, id.User(), s)
		return s, nil
	}))
	select {
	case <-ctx.Done():
		return User{}, nil, ctx.Err()
	case res := <-ch:
		if res.Shared {
			st.metrics.Coalesced.WithLabelValues("settings").Inc()
		}
		if res.Err != nil {
			return User{}, nil, res.Err
		}
		return res.Val.(User), nil, nil
	}
}

// readTimeout bounds one shared read of a settings object from storage,
// as libindex bounds a file's.
const readTimeout = 30 * time.Second

// settingsKeySpace holds each user's cached settings, in the user's Redis
// hash tag as the library's keys are (see libindex). It keeps its version
// across the change that made the value name its user: settings are written
// through the cache, and older replicas read the new value, while newer ones
// take an old value for a miss and reload it, so no replica misses
// another's write.
const settingsKeySpace = "skills:v1:settings:"

// CacheKey names a user's cached settings.
func CacheKey(user string) string { return settingsKeySpace + "{" + user + "}" }

func settingsLockKey(user string) string { return "lock:" + CacheKey(user) }

func (st *Store) store(ctx context.Context, user string, s User) {
	b, _ := json.Marshal(cachedSettings{Owner: user, User: s})
	if err := st.shared.Store(ctx, map[string][]byte{CacheKey(user): b}, st.ttl); err != nil {
		st.cacheLog.Failed(ctx, "storing skill settings", err)
	}
}

// Forget drops the user's cached settings.
func (st *Store) Forget(ctx context.Context, user string) error {
	defer st.DropLocal(user)
	return st.shared.Delete(ctx, CacheKey(user))
}

// load reads the user's settings from storage and their ETag ("" when none
// exist).
func (st *Store) load(ctx context.Context, user string) (User, string, error) {
	var s User
	data, a, err := textfile.Reader{MaxBytes: maxSettingsBytes}.Read(ctx, st.bucket, st.key(user), "skill settings")
	if objstore.IsNotFound(err) {
		return s, "", nil
	}
	if err != nil {
		return s, "", err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, "", fmt.Errorf("skill settings of %q are corrupt: %w", user, err)
	}
	return s, a.ETag, nil
}

// Load reads the user's settings from storage, past every cache: an
// operator's read of what is stored.
func (st *Store) Load(ctx context.Context, user string) (User, error) {
	s, _, err := st.load(ctx, user)
	return s, err
}

// Update applies change to the user's settings with a conditional write,
// retried when another writer got in between, so concurrent changes are all
// kept, then caches the result. change reports whether it changed anything.
func (st *Store) Update(ctx context.Context, id mounts.Caller, change func(*User) bool) error {
	if st.ttl > 0 {
		unlock := st.lock(ctx, id.User())
		defer unlock()
		// Last, once the shared cache holds the change (or nothing).
		defer st.DropLocal(id.User())
	}
	var final User
	wrote := false // a Put was sent: it may have landed even if it failed
	err := objstore.RetryConditional(ctx, settingsAttempts, settingsBackoff, func() error {
		s, etag, err := st.load(ctx, id.User())
		final = s
		if err != nil || !change(&s) {
			return err
		}
		data, _ := json.Marshal(s)
		wrote = true
		_, err = st.bucket.Put(ctx, st.key(id.User()), bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		final = s
		return err
	})
	if objstore.LostRace(err) {
		return fmt.Errorf("%w: skill settings changed during %d attempts", errkind.Aborted, settingsAttempts)
	}
	if err != nil {
		// A write that may have landed: let the next read fill the cache.
		if st.ttl > 0 && wrote && !objstore.LostRace(err) {
			_ = st.Forget(context.WithoutCancel(ctx), id.User())
		}
		return err
	}
	if st.ttl > 0 {
		st.store(context.WithoutCancel(ctx), id.User(), final)
	}
	return nil
}

// lock takes the user's settings lock, waiting up to settingsLockWait; it
// goes on without it after that (or when the shared cache fails): the
// conditional write keeps every change, the lock only orders cache fills.
func (st *Store) lock(ctx context.Context, user string) (unlock func()) {
	deadline := time.Now().Add(settingsLockWait)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		unlock, ok, err := st.shared.TryLock(ctx, settingsLockKey(user), settingsLockTTL)
		if err != nil {
			return func() {}
		}
		if ok {
			return unlock
		}
		if time.Now().After(deadline) {
			return func() {}
		}
		select {
		case <-ctx.Done():
			return func() {}
		case <-time.After(wait):
		}
	}
}
