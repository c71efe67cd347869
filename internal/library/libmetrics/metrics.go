// Package libmetrics is the authors' path's metrics: LibraryService changes
// by operation and result, and the bytes published.
package libmetrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics count the authors' changes by operation and result.
type Metrics struct {
	changes *prometheus.CounterVec
	// Bytes counts the bytes of skill folders published.
	Bytes prometheus.Counter
}

// Operations and results, every pair initialized.
var (
	ops     = []string{"publish", "pending", "validate", "delete", "label", "rollback", "review", "delete_versions", "reject_proposals", "sign"}
	results = []string{"ok", "invalid", "error"}
)

// New returns the metrics, registered with reg unless it is nil.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_library_changes_total",
			Help: "LibraryService changes by operation (publish, pending, validate, delete, label, rollback, review, sign; delete_versions, reject_proposals by admins) and result (ok; invalid: a folder refused by the rules; error: anything else refused or failed).",
		}, []string{"op", "result"}),
		Bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_library_published_bytes_total",
			Help: "Bytes of skill folders published (live or pending).",
		}),
	}
	for _, op := range ops {
		for _, r := range results {
			m.changes.WithLabelValues(op, r)
		}
	}
	if reg != nil {
		reg.MustRegister(m.changes, m.Bytes)
	}
	return m
}

// Count records one change of op: invalid when the rules refused its
// folder, else ok without err and error with one.
func (m *Metrics) Count(op string, invalid bool, err error) {
	result := "ok"
	switch {
	case invalid:
		result = "invalid"
	case err != nil:
		result = "error"
	}
	m.changes.WithLabelValues(op, result).Inc()
}
