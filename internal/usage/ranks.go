package usage

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Ranks are each library's recent activations as a listing orders its
// skills by them (skillview.Uses, for --skills.order-by-use and
// --skills.search-use-prior). A listing never waits on storage: Recent
// answers what it holds and, once that is a flush interval old, reads the
// library's Reader.Recent again in the background, over the days since
// the first the store lists the library as used on: a library with no use
// costs no read of its own, one used only today no roll-up read. Until
// the first read is done, and while reading fails (Redis down), a library
// counts as unused: its skills keep their path order.
type Ranks struct {
	r    *Reader
	days int
	ttl  time.Duration
	now  func() time.Time

	mu    sync.Mutex
	libs  map[LibraryRef]*ranked
	slots chan struct{} // the reads under way, bounded
	reads sync.WaitGroup

	// The libraries with any use over the days, as the store lists them
	// (a set per day): a library none lists is read no further, so the
	// many never used cost no read of their own.
	usedMu            sync.Mutex
	past              map[LibraryRef]Day // the first day of use before today
	today             map[LibraryRef]bool
	pastAt, todayAt   time.Time
	pastDay, todayDay Day
}

// ranked is one library's activations as Ranks holds them.
type ranked struct {
	counts  map[string]int64 // nil: unused, or unknown
	version string           // of counts' order ("": none)
	read    time.Time        // when the last read started; zero: never
	reading bool
}

// Bounds of Ranks' background reads: how many run at once (others wait
// for a later call) and how long one may take.
const (
	maxRankReads = 4
	rankReadTime = 10 * time.Second
)

// NewRanks returns the ranks of r's libraries over its Config.RecentDays.
func NewRanks(r *Reader) *Ranks {
	return &Ranks{r: r, days: r.cfg.RecentDays, ttl: r.cfg.FlushInterval, now: time.Now,
		libs: make(map[LibraryRef]*ranked), slots: make(chan struct{}, maxRankReads)}
}

// Recent implements skillview.Uses: how often each skill of id's layer
// was activated over the recent days, as of the last read of its library,
// and the version of their order.
func (k *Ranks) Recent(id mounts.Caller, layer string) (map[string]int64, string) {
	lib, ok := layerLibrary(id, layer)
	if !ok {
		return nil, ""
	}
	now := k.now()
	k.mu.Lock()
	e := k.libs[lib]
	if e == nil {
		if len(k.libs) >= maxRecent {
			clear(k.libs)
		}
		e = &ranked{}
		k.libs[lib] = e
	}
	counts, version := e.counts, e.version
	start := !e.reading && (e.read.IsZero() || now.Sub(e.read) >= k.ttl)
	if start {
		select {
		case k.slots <- struct{}{}:
			e.reading, e.read = true, now
			k.reads.Add(1)
		default: // busy: a later call reads it
			start = false
		}
	}
	k.mu.Unlock()
	if start {
		go k.refresh(lib, e)
	}
	return counts, version
}

// refresh reads lib's recent activations into e.
func (k *Ranks) refresh(lib LibraryRef, e *ranked) {
	defer k.reads.Done()
	ctx, cancel := context.WithTimeout(context.Background(), rankReadTime)
	var counts map[string]int64
	days, err := k.used(ctx, lib)
	if days > 0 {
		counts, err = k.r.recentUses(ctx, lib, days)
	}
	cancel()
	<-k.slots
	if err != nil {
		counts = nil // an outage orders as if nothing was used
	}
	version := orderVersion(counts)
	k.mu.Lock()
	e.counts, e.version, e.reading = counts, version, false
	k.mu.Unlock()
}

// used returns over how many of the recent days (today's included) the
// store lists lib as used, counted from the first it lists it on: 0 for
// none, 1 for today alone (no roll-up to read). Today's list is read once
// per flush interval, the days before once an hour (as Reader.Recent
// keeps their counts).
func (k *Ranks) used(ctx context.Context, lib LibraryRef) (int, error) {
	k.usedMu.Lock()
	defer k.usedMu.Unlock()
	now := k.now()
	today := DayOf(now)
	if k.pastDay != today || now.Sub(k.pastAt) >= recentPastTTL {
		past := make(map[LibraryRef]Day)
		for d := today - 1; d > today-Day(k.days); d-- { // the earliest day wins
			libs, err := k.r.store.libraries(ctx, d)
			if err != nil {
				return 0, err
			}
			for _, l := range libs {
				past[l] = d
			}
		}
		k.past, k.pastDay, k.pastAt = past, today, now
	}
	if k.todayDay != today || now.Sub(k.todayAt) >= k.ttl {
		libs, err := k.r.store.libraries(ctx, today)
		if err != nil {
			return 0, err
		}
		k.today = make(map[LibraryRef]bool, len(libs))
		for _, l := range libs {
			k.today[l] = true
		}
		k.todayDay, k.todayAt = today, now
	}
	if first, ok := k.past[lib]; ok {
		return int(today-first) + 1, nil
	}
	if k.today[lib] {
		return 1, nil
	}
	return 0, nil
}

// Forget makes the next use of each library read it again, past the
// reader's cache too: for a change the caller knows of (a test). It waits
// for the reads under way first: one that began before the change would
// otherwise end after Forget and stand for the read it asks for.
func (k *Ranks) Forget() {
	k.reads.Wait()
	k.mu.Lock()
	for _, e := range k.libs {
		e.read = time.Time{}
	}
	k.mu.Unlock()
	k.usedMu.Lock()
	k.pastDay, k.todayDay = 0, 0
	k.usedMu.Unlock()
	k.r.mu.Lock()
	clear(k.r.recent)
	k.r.mu.Unlock()
}

// Wait waits for the reads under way: with Forget, a test's way to see
// what was flushed.
func (k *Ranks) Wait() { k.reads.Wait() }

// orderVersion names the order counts give: skills by count, those of
// equal count together. Counts that order alike (5 and 3, then 6 and 3)
// have one version, so a kept reply is rebuilt when its order changes,
// not on every activation. "" is no use at all.
func orderVersion(counts map[string]int64) string {
	names := make([]string, 0, len(counts))
	for s, n := range counts {
		if n > 0 {
			names = append(names, s)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	if len(names) == 0 {
		return ""
	}
	var b []byte
	for i, s := range names {
		var tie uint64 // with the one before
		if i > 0 && counts[names[i-1]] == counts[s] {
			tie = 1
		}
		b = binary.AppendUvarint(skillview.AppendField(b, s), tie)
	}
	sum := sha256.Sum256(b)
	return string(sum[:16])
}

// layerLibrary is the library of id's layer as skillview names it.
func layerLibrary(id mounts.Caller, layer string) (LibraryRef, bool) {
	switch {
	case layer == skillview.LayerUser:
		l := Own(id)
		return l, !l.IsZero()
	case layer == skillview.LayerShared:
		return Organization(), true
	case strings.HasPrefix(layer, skillview.LayerTeam):
		return Team(id, layer[len(skillview.LayerTeam):])
	}
	return LibraryRef{}, false
}
