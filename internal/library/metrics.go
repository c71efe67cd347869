package library

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics count the authors' changes by operation and result.
type metrics struct {
	changes *prometheus.CounterVec
	bytes   prometheus.Counter
}

// Operations and results, every pair initialized.
var (
	metricOps     = []string{"publish", "pending", "validate", "delete", "label", "rollback", "review", "delete_versions", "reject_proposals", "sign"}
	metricResults = []string{"ok", "invalid", "error"}
)

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_library_changes_total",
			Help: "LibraryService changes by operation (publish, pending, validate, delete, label, rollback, review; delete_versions, reject_proposals by admins) , sign) and result (ok; invalid: a folder refused by the rules; error: anything else refused or failed).",
		}, []string{"op", "result"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_library_published_bytes_total",
			Help: "Bytes of skill folders published (live or pending).",
		}),
	}
	for _, op := range metricOps {
		for _, r := range metricResults {
			m.changes.WithLabelValues(op, r)
		}
	}
	if reg != nil {
		reg.MustRegister(m.changes, m.bytes)
	}
	return m
}

// WithRegisterer registers the publisher's metrics with reg.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(p *Publisher) { p.metrics = newMetrics(reg) }
}

// count records one change of op ending with err.
func (m *metrics) count(op string, err error) {
	result := "ok"
	var pe *ProblemsError
	switch {
	case errors.As(err, &pe):
		result = "invalid"
	case err != nil:
		result = "error"
	}
	m.changes.WithLabelValues(op, result).Inc()
}
