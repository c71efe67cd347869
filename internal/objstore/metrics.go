package objstore

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Operation names used as metric labels.
const (
	OpGet      = "get"
	OpGetRange = "get_range"
	OpStat     = "stat"
	OpPut      = "put"
	OpDelete   = "delete"
	OpList     = "list"
)

var allOps = []string{OpGet, OpGetRange, OpStat, OpPut, OpDelete, OpList}

type metricsBucket struct {
	b        Bucket
	ops      *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// WrapWithMetrics counts and times every operation on b. Expected outcomes
// (not found, a failed precondition, a lost race, a cancelled call) are not
// failures. Reads are timed until their body is closed, so the duration
// covers the transfer and not just the first byte.
func WrapWithMetrics(b Bucket, reg prometheus.Registerer) Bucket {
	m := &metricsBucket{
		b: b,
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_objstore_operations_total",
			Help: "Object store operations started.",
		}, []string{"operation"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_objstore_operation_failures_total",
			Help: "Object store operations that failed unexpectedly.",
		}, []string{"operation"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "skillsvc_objstore_operation_duration_seconds",
			Help:    "Duration of object store operations, including body transfer.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"operation"}),
	}
	// Every label exists from the start, so rates are defined before traffic.
	for _, op := range allOps {
		m.ops.WithLabelValues(op)
		m.failures.WithLabelValues(op)
		m.duration.WithLabelValues(op)
	}
	reg.MustRegister(m.ops, m.failures, m.duration)
	return m
}

func expected(err error) bool {
	return err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrPrecondition) ||
		errors.Is(err, ErrConflict) || errors.Is(err, context.Canceled)
}

// track starts timing op; done records the outcome.
func (m *metricsBucket) track(op string) (done func(error)) {
	m.ops.WithLabelValues(op).Inc()
	start := time.Now()
	return func(err error) {
		m.duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
		if !expected(err) {
			m.failures.WithLabelValues(op).Inc()
		}
	}
}

// timedBody finishes the measurement when the caller closes the body.
type timedBody struct {
	io.ReadCloser
	done func(error)
	err  error
}

func (t *timedBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}

func (t *timedBody) Close() error {
	err := t.ReadCloser.Close()
	if t.done != nil {
		t.done(t.err)
		t.done = nil
	}
	return err
}

func (m *metricsBucket) Get(ctx context.Context, key string) (io.ReadCloser, Attributes, error) {
	done := m.track(OpGet)
	rc, a, err := m.b.Get(ctx, key)
	if err != nil {
		done(err)
		return nil, a, err
	}
	return &timedBody{ReadCloser: rc, done: done}, a, nil
}

func (m *metricsBucket) GetRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, Attributes, error) {
	done := m.track(OpGetRange)
	rc, a, err := m.b.GetRange(ctx, key, off, length)
	if err != nil {
		done(err)
		return nil, a, err
	}
	return &timedBody{ReadCloser: rc, done: done}, a, nil
}

func (m *metricsBucket) Stat(ctx context.Context, key string) (Attributes, error) {
	done := m.track(OpStat)
	a, err := m.b.Stat(ctx, key)
	done(err)
	return a, err
}

func (m *metricsBucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts PutOptions) (Attributes, error) {
	done := m.track(OpPut)
	a, err := m.b.Put(ctx, key, r, size, opts)
	done(err)
	return a, err
}

func (m *metricsBucket) Delete(ctx context.Context, key string) error {
	done := m.track(OpDelete)
	err := m.b.Delete(ctx, key)
	done(err)
	return err
}

func (m *metricsBucket) List(ctx context.Context, opts ListOptions) (ListPage, error) {
	done := m.track(OpList)
	p, err := m.b.List(ctx, opts)
	done(err)
	return p, err
}
