package libindex

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
)

// Metrics tell an operator how fresh the served indexes are and what
// serving them costs.
type Metrics struct {
	Loads         *prometheus.CounterVec // by source
	Revalidations *prometheus.CounterVec // by mode and result
	Coalesced     *prometheus.CounterVec // by what
	Age           prometheus.Histogram   // of every index served
	StaleServed   prometheus.Counter     // indexes served past max stale because storage failed
	Files         *prometheus.CounterVec // content reads by result
	Mismatched    *prometheus.CounterVec // by kind and source
	Digests       *prometheus.CounterVec // skill file digests an index build took, by source
	DigestBytes   prometheus.Counter     // bytes read to compute them
	// Heads are the SKILL.md heads the catalog's layer builds took, by
	// source (HeadCarried, HeadCached, HeadParsed).
	Heads *prometheus.CounterVec

	// What the replica holds decoded (cache.Held), by kind, against the
	// budget.
	*cache.HeldMetrics
}

// Index sources, revalidation modes, and the kinds of values the cache
// holds for the catalog (KindSettings is the catalog's settings).
const (
	SourceSharedCache = "shared_cache"
	SourceBucket      = "persisted"
	SourceListing     = "listing"

	ModeBackground = "background"
	ModeSync       = "sync"

	// Revalidation results besides ok and error: another replica held
	// the lock (the index is served as is), or had revalidated the index
	// less than a refresh interval before (it is taken from the shared
	// cache instead of listing), or the background queue was full (the
	// index is served as is and tried again a refresh interval later).
	ResultLocked    = "locked"
	ResultElsewhere = "elsewhere"
	ResultDeferred  = "deferred"

	KindIndex    = "index"
	KindSettings = "settings"

	// Where an index build took a file's digest from: the previous index
	// (same ETag), the shared cache (another build hashed that version), or
	// a read of the file.
	DigestCarried  = "carried"
	DigestCached   = "cached"
	DigestComputed = "computed"

	// Where a layer build took a skill's parsed SKILL.md head from: the
	// layer of the previous generation (same version), the shared cache
	// (some replica parsed that version), or a YAML parse here.
	HeadCarried = "carried"
	HeadCached  = "cached"
	HeadParsed  = "parsed"
)

// NewMetrics returns the metrics, registered on reg unless it is nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		HeldMetrics: cache.NewHeldMetrics(),
		Loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_loads_total",
			Help: "Library indexes loaded into this process, by source: shared_cache (another replica's), persisted (the bucket's index object) or listing (listed and revalidated here).",
		}, []string{"source"}),
		Revalidations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_revalidations_total",
			Help: "Library index revalidations by mode (background while serving, sync before answering) and result (ok, error, locked: another replica was revalidating, elsewhere: another replica had just revalidated it, so it came from the shared cache without a listing, deferred: every background worker busy and the queue full).",
		}, []string{"mode", "result"}),
		Coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_coalesced_waits_total",
			Help: "Calls that waited for a load another call had started instead of making their own storage requests, by what was loaded.",
		}, []string{"what"}),
		Age: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "skillsvc_skills_index_age_seconds",
			Help:    "Age of the library index each call was answered from (since its listing).",
			Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 300, 3600},
		}),
		StaleServed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_stale_served_total",
			Help: "Calls answered from an index older than the max staleness because revalidating it failed (object storage down).",
		}),
		Files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_file_reads_total",
			Help: "Skill file content reads by result: hit (cache), miss (read from storage and cached), uncached (too large or unversioned).",
		}, []string{"result"}),
		Mismatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_cache_mismatched_total",
			Help: "Values ignored because they describe another library or user than the one under whose key they were found (a copied key, a bug), by kind (index, settings) and source (shared_cache, persisted). The library is listed, or the settings read, again.",
		}, []string{"kind", "source"}),
		Digests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_digests_total",
			Help: "Skill file digests (sha256) taken by library index builds, by source: carried (from the previous index, ETag unchanged), cached (hashed before by some replica) or computed (the file read and hashed here).",
		}, []string{"source"}),
		Heads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_layer_heads_total",
			Help: "Parsed SKILL.md heads taken by the catalog's layer builds, by source: carried (from the layer of the previous generation, same version), cached (parsed before by some replica, from the shared cache) or parsed (its YAML parsed here).",
		}, []string{"source"}),
		DigestBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_digest_bytes_total",
			Help: "Bytes of skill files read to compute their digests.",
		}),
	}
	// Every series exists from the start, so a rate over it is defined.
	for _, s := range []string{SourceSharedCache, SourceBucket, SourceListing} {
		m.Loads.WithLabelValues(s)
	}
	for _, mode := range []string{ModeBackground, ModeSync} {
		for _, r := range []string{"ok", "error", ResultLocked, ResultElsewhere} {
			m.Revalidations.WithLabelValues(mode, r)
		}
	}
	for _, w := range []string{"index", "file", "settings"} {
		m.Coalesced.WithLabelValues(w)
	}
	for _, src := range []string{DigestCarried, DigestCached, DigestComputed} {
		m.Digests.WithLabelValues(src)
	}
	for _, src := range []string{HeadCarried, HeadCached, HeadParsed} {
		m.Heads.WithLabelValues(src)
	}
	for _, r := range []string{"hit", "miss", "uncached"} {
		m.Files.WithLabelValues(r)
	}
	// Settings are cached, never persisted as a cache: their object is the
	// source of truth.
	m.Mismatched.WithLabelValues(KindIndex, SourceSharedCache)
	m.Mismatched.WithLabelValues(KindIndex, SourceBucket)
	m.Mismatched.WithLabelValues(KindSettings, SourceSharedCache)
	if reg != nil {
		reg.MustRegister(m.Loads, m.Revalidations, m.Coalesced, m.Age, m.StaleServed, m.Files, m.Mismatched, m.Digests, m.DigestBytes, m.Heads,
			m.HeldBytes, m.HeldItems, m.HeldMaxBytes, m.HeldEvictions, m.HeldTooLarge)
	}
	return m
}
