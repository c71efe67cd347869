package libindex

import (
	"math/bits"
	"time"
)

// quietFraction is the share of the time a library's content had gone
// unchanged, when it was listed, that its index is then served before it is
// revalidated: the heuristic freshness of HTTP caches (RFC 9111 §4.2.2,
// whose "typical setting" is this 10% of the time since Last-Modified).
const quietFraction = 10

// spreadFraction: up to this share of every interval is taken off, by
// library, so that libraries first listed together (a replica's start, a
// flushed cache, a load test's first pass) are not all revalidated in the
// same second of every interval after.
const spreadFraction = 10

// FreshFor is how long after its listing x is served before a call
// revalidates it: a tenth of how long its content had been the same when
// listed (Listed - Changed), at least --skills.index-refresh and at most
// MaxRefresh, less its spread. A library that keeps changing is listed
// every refresh interval; one quiet for minutes every MaxRefresh; a change
// found snaps it back (a listing that finds new content, or one after a
// drop, starts Changed afresh). Polling only catches changes made around
// skillsvc (other S3 tools, or an event lost): --skills.index-max-stale
// still bounds how late those show up, as MaxRefresh stays below it.
func (ix *Store) FreshFor(x *Index) time.Duration {
	d := ix.cfg.IndexRefresh // nothing known of its history
	if !x.Changed.IsZero() {
		d = min(max(x.Listed.Sub(x.Changed)/quietFraction, ix.cfg.IndexRefresh), ix.MaxRefresh())
	}
	return d - spread(d, x.Gen)
}

// spread is the part of interval d taken off for the index of content gen:
// less than a tenth, in proportion to gen. Gen is random when content is
// first listed and the same on every replica, so every replica gives a
// library the same interval (and the shared lock and cache keep it listed
// once an interval across them) while libraries' intervals differ.
func spread(d time.Duration, gen uint64) time.Duration {
	hi, _ := bits.Mul64(uint64(d/spreadFraction), gen)
	return time.Duration(hi)
}

// MaxRefresh is the longest interval FreshFor gives: a refresh interval
// short of the max staleness, so that a library in use is revalidated in
// the background before a caller would have to wait for it (never less
// than the refresh interval).
func (ix *Store) MaxRefresh() time.Duration {
	return max(ix.cfg.IndexRefresh, ix.cfg.IndexMaxStale-ix.cfg.IndexRefresh)
}
