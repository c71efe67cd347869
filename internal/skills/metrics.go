package skills

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics tell an operator how fresh the served indexes are and what
// serving them costs.
type metrics struct {
	loads         *prometheus.CounterVec // by source
	revalidations *prometheus.CounterVec // by mode and result
	coalesced     *prometheus.CounterVec // by what
	age           prometheus.Histogram   // of every index served
	staleServed   prometheus.Counter     // indexes served past max stale because storage failed
	files         *prometheus.CounterVec // content reads by result
	mismatched    *prometheus.CounterVec // by kind and source
}

// Index sources, revalidation modes and results.
const (
	sourceSharedCache = "shared_cache"
	sourceBucket      = "persisted"
	sourceListing     = "listing"

	modeBackground = "background"
	modeSync       = "sync"

	kindIndex    = "index"
	kindSettings = "settings"
)

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_loads_total",
			Help: "Library indexes loaded into this process, by source: shared_cache (another replica's), persisted (the bucket's index object) or listing (listed and revalidated here).",
		}, []string{"source"}),
		revalidations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_revalidations_total",
			Help: "Library index revalidations by mode (background while serving, sync before answering) and result (ok, error, locked: another replica was revalidating).",
		}, []string{"mode", "result"}),
		coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_coalesced_waits_total",
			Help: "Calls that waited for a load another call had started instead of making their own storage requests, by what was loaded.",
		}, []string{"what"}),
		age: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "skillsvc_skills_index_age_seconds",
			Help:    "Age of the library index each call was answered from (since its listing).",
			Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 300, 3600},
		}),
		staleServed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_skills_index_stale_served_total",
			Help: "Calls answered from an index older than the max staleness because revalidating it failed (object storage down).",
		}),
		files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_file_reads_total",
			Help: "Skill file content reads by result: hit (cache), miss (read from storage and cached), uncached (too large or unversioned).",
		}, []string{"result"}),
		mismatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_cache_mismatched_total",
			Help: "Values ignored because they describe another library or user than the one under whose key they were found (a copied key, a bug), by kind (index, settings) and source (shared_cache, persisted). The library is listed, or the settings read, again.",
		}, []string{"kind", "source"}),
	}
	// Every series exists from the start, so a rate over it is defined.
	for _, s := range []string{sourceSharedCache, sourceBucket, sourceListing} {
		m.loads.WithLabelValues(s)
	}
	for _, mode := range []string{modeBackground, modeSync} {
		for _, r := range []string{"ok", "error", "locked"} {
			m.revalidations.WithLabelValues(mode, r)
		}
	}
	for _, w := range []string{"index", "file", "settings"} {
		m.coalesced.WithLabelValues(w)
	}
	for _, r := range []string{"hit", "miss", "uncached"} {
		m.files.WithLabelValues(r)
	}
	// Settings are cached, never persisted as a cache: their object is the
	// source of truth.
	m.mismatched.WithLabelValues(kindIndex, sourceSharedCache)
	m.mismatched.WithLabelValues(kindIndex, sourceBucket)
	m.mismatched.WithLabelValues(kindSettings, sourceSharedCache)
	if reg != nil {
		reg.MustRegister(m.loads, m.revalidations, m.coalesced, m.age, m.staleServed, m.files, m.mismatched)
	}
	return m
}
