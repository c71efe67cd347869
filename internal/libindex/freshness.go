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

// spreadFraction: up to this share of the interval at which a replica asks
// the shared cache again is taken off, by library, so that libraries held
// together do not all ask in the same second.
const spreadFraction = 10

// FreshFor is how long after its listing x is served before a call
// revalidates it: about a tenth of how long its content had been the same
// when listed (Listed - Changed), at least --skills.index-refresh and at
// most MaxRefresh. A library that keeps changing is listed every refresh
// interval; one quiet for minutes every MaxRefresh; a change found snaps
// it back (a listing that finds new content, or one after a drop, starts
// Changed afresh). Polling only catches changes made around skillsvc
// (other S3 tools, or an event lost): --skills.index-max-stale still
// bounds how late those show up, as MaxRefresh stays below it.
//
// The interval ends on the library's phase (due): at the point of a fixed
// cycle nearest to that interval, every time.
func (ix *Store) FreshFor(x *Index) time.Duration {
	d := ix.cfg.IndexRefresh // nothing known of its history
	if !x.Changed.IsZero() {
		d = min(max(x.Listed.Sub(x.Changed)/quietFraction, ix.cfg.IndexRefresh), ix.MaxRefresh())
	}
	return due(x.Listed, d, ix.phase(), ix.slack(d), x.Gen)
}

// phase is the cycle on which every library falls due at a point of its
// own: the refresh interval, so that libraries listed together spread
// over a whole base interval, and an interval that grew past it still
// ends on the library's point (it is then a multiple of the cycle).
func (ix *Store) phase() time.Duration { return ix.cfg.IndexRefresh }

// slack is how far past d an interval may end: half a phase cycle, so
// that an interval is d rounded to the nearest point of the library's
// phase rather than cut to the point before it, but never past MaxRefresh,
// which keeps a refresh interval for the background revalidation before
// the max staleness (with --storage=local's equal refresh and staleness,
// none).
func (ix *Store) slack(d time.Duration) time.Duration {
	return max(0, min(ix.phase()/2, ix.MaxRefresh()-d))
}

// due is how long after listed an index of content gen with interval d
// falls due: at the first point of gen's phase on a cycle of period p after
// listed+d-p+slack, so in (d-p+slack, d+slack]. Libraries listed together
// (a replica's start, a flushed cache, a load test's first pass) fall due
// across the whole cycle, in proportion to gen, not in one second; and as
// every listing after ends on the library's own point of the cycle, they
// stay spread however late each revalidation ran, instead of falling due
// together forever after. With half a cycle of slack, a listing off its
// library's point (a first listing, a new replica taking a persisted index
// listed seconds before) is served at least half an interval before the
// next one, not for anything from no time at all. Gen is random when
// content is first listed and the same on every replica, so every replica
// gives a library the same interval (and the shared lock and cache keep it
// listed once an interval across them). The cycle is fixed, not a share of
// d, so a library's point in it stays put while its interval grows.
func due(listed time.Time, d, p, slack time.Duration, gen uint64) time.Duration {
	if p <= 0 || p > d {
		return d
	}
	point := int64(share(p, gen))
	earliest := listed.Add(d - p + slack).UnixNano()
	wait := (point - earliest) % int64(p)
	if wait <= 0 {
		wait += int64(p) // the first point strictly after earliest
	}
	return d - p + slack + time.Duration(wait)
}

// spread is the part of interval d taken off for the index of content gen:
// less than a tenth, in proportion to gen.
func spread(d time.Duration, gen uint64) time.Duration { return share(d/spreadFraction, gen) }

// share is gen's point in [0, d): in proportion to gen.
func share(d time.Duration, gen uint64) time.Duration {
	hi, _ := bits.Mul64(uint64(d), gen)
	return time.Duration(hi)
}

// MaxRefresh is the longest interval FreshFor gives: a refresh interval
// short of the max staleness, so that a library in use is revalidated in
// the background before a caller would have to wait for it (never less
// than the refresh interval).
func (ix *Store) MaxRefresh() time.Duration {
	return max(ix.cfg.IndexRefresh, ix.cfg.IndexMaxStale-ix.cfg.IndexRefresh)
}
