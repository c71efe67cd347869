package library

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/library/libmetrics"
)

// WithRegisterer registers the publisher's metrics with reg.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(p *Publisher) { p.metrics, p.reg = libmetrics.New(reg), reg }
}

// count records one change of op ending with err.
func count(m *libmetrics.Metrics, op string, err error) {
	var pe *ProblemsError
	m.Count(op, errors.As(err, &pe), err)
}
