package app

import (
	"net/http"
	"net/http/pprof"
)

// pprofMux serves net/http/pprof's handlers under /debug/pprof/ on a mux of
// its own: importing the package registers them on http.DefaultServeMux,
// which no listener of ours serves.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
