package libindex

import "time"

// Config is what the store and the file reader need of the skills
// configuration; the flags (--skills.index-refresh, …) belong to
// skills.Config, which makes this with its IndexConfig method.
type Config struct {
	// IndexRefresh is the age after which an index is revalidated in the
	// background while it keeps being served; 0 lists the library on every
	// call and caches no index.
	IndexRefresh time.Duration
	// IndexMaxStale is the age after which an index is revalidated before
	// the call is answered.
	IndexMaxStale time.Duration
	// StaleIfError is how old an index may be served when revalidating it
	// fails.
	StaleIfError time.Duration
	// MaxHeldBytes bounds what the replica holds decoded (Held): the
	// indexes, and what the catalog builds on them.
	MaxHeldBytes int64
	// MaxObjects bounds the objects read from one library listing.
	MaxObjects int
	// MaxSkills bounds the skills an index holds the heads of
	// (--skills.max-skills); 0 holds every skill of the listing.
	MaxSkills int
	// HeadTTL is how long a SKILL.md head, a file's content or kind, and an
	// index stay in the cache.
	HeadTTL time.Duration
	// HeadBytes are read first from each SKILL.md; Concurrency heads are
	// read in parallel.
	HeadBytes   int
	Concurrency int
	// MaxCachedFileBytes is the largest file whose content is cached.
	MaxCachedFileBytes int64
	// BackgroundRevalidations bounds the revalidations callers do not wait
	// for that run at once; 0 is DefaultBackgroundRevalidations.
	BackgroundRevalidations int
}

// DefaultBackgroundRevalidations is --skills.background-revalidations'
// default: at 20-60 ms a LIST, 32 workers revalidate 500-1,600 small
// libraries a second (10,000 users calling continuously need 400 without
// events), while a replica never has more of its own listings under way.
const DefaultBackgroundRevalidations = 32
