package panics_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillsvc/skillsvc/internal/panics"
)

func TestHandler(t *testing.T) {
	counts := panics.HTTPMetric(prometheus.NewRegistry(), "json")
	log := slog.New(slog.DiscardHandler)
	serve := func(h http.HandlerFunc) (rec *httptest.ResponseRecorder, repanicked any) {
		rec = httptest.NewRecorder()
		defer func() { repanicked = recover() }()
		panics.Handler(h, log, counts.WithLabelValues("json"), "json").ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
		return rec, nil
	}

	rec, p := serve(func(http.ResponseWriter, *http.Request) { panic("boom") })
	if p != nil || rec.Code != http.StatusInternalServerError || rec.Body.String() != `{"code":13,"message":"internal error"}` {
		t.Errorf("panic before answering: HTTP %d %q (re-panicked %v), want 500 with an internal error body", rec.Code, rec.Body, p)
	}
	// Once an answer has started its status cannot change: the connection
	// is aborted instead (net/http drops it quietly).
	_, p = serve(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK); panic("late") })
	if p != http.ErrAbortHandler {
		t.Errorf("panic after answering re-panicked %v, want http.ErrAbortHandler", p)
	}
	// A deliberate abort is not a bug: passed on, not counted.
	_, p = serve(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	if p != http.ErrAbortHandler {
		t.Errorf("ErrAbortHandler re-panicked %v", p)
	}
	if n := testutil.ToFloat64(counts.WithLabelValues("json")); n != 2 {
		t.Errorf("counted %v panics, want 2", n)
	}
	rec, p = serve(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	if p != nil || rec.Code != http.StatusTeapot {
		t.Errorf("no panic: HTTP %d, re-panicked %v", rec.Code, p)
	}
}
