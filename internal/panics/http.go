package panics

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTPMetric counts the panics the HTTP edges recovered, by handler.
func HTTPMetric(reg prometheus.Registerer, handlers ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skillsvc_http_panics_total",
		Help: "Panics recovered in HTTP handlers (each answered 500 or JSON-RPC -32603 for its request only).",
	}, []string{"handler"})
	for _, h := range handlers {
		c.WithLabelValues(h)
	}
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

// Recovered logs a recovered panic with its stack and counts it; it returns
// false for http.ErrAbortHandler, which is a deliberate abort to re-panic.
func Recovered(log *slog.Logger, count prometheus.Counter, where string, p any) bool {
	if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		return false
	}
	log.Error("panic in handler", "handler", where, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	if count != nil {
		count.Inc()
	}
	return true
}

// Handler keeps a panic in next to its own request: net/http would recover
// it too, but with a dropped connection and no metric. The request gets a
// 500 with a JSON body, like an Internal status on the JSON gateway; if
// next had already started its answer, the connection is aborted instead.
func Handler(next http.Handler, log *slog.Logger, count prometheus.Counter, where string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &startedWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if !Recovered(log, count, where, p) || rw.started {
				panic(http.ErrAbortHandler)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"code":13,"message":"internal error"}`)
		}()
		next.ServeHTTP(rw, r)
	})
}

// startedWriter notes whether an answer has begun.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(code int) {
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *startedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps streaming answers (server-sent events) streaming.
func (w *startedWriter) Flush() {
	w.started = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
