package watch

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	open        prometheus.Gauge
	refused     *prometheus.CounterVec
	looks       prometheus.Counter
	unkept      prometheus.Counter
	unpublished prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{Name: "skillsvc_watch_streams", Help: "WatchSkills streams open on this replica."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_watch_refused_total",
			Help: "WatchSkills streams refused, by the bound they would pass (user, replica)."}, []string{"bound"}),
		looks: prometheus.NewCounter(prometheus.CounterOpts{Name: "skillsvc_watch_looks_total", Help: "Looks at a watched catalog (one per user per change or interval, shared by its watchers)."}),
		unkept: prometheus.NewCounter(prometheus.CounterOpts{Name: "skillsvc_watch_states_unkept_total",
			Help: "Catalog states over --watch.max-state-bytes, not kept for resuming."}),
		unpublished: prometheus.NewCounter(prometheus.CounterOpts{Name: "skillsvc_watch_unpublished_total",
			Help: "Changes the other replicas were not told of (Redis failed or the queue was full); they see them within --watch.interval."}),
	}
	for _, b := range []string{"user", "replica"} {
		m.refused.WithLabelValues(b)
	}
	if reg != nil {
		reg.MustRegister(m.open, m.refused, m.looks, m.unkept, m.unpublished)
	}
	return m
}
