package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/logtest"
)

// TestPprof: Go's profiles are on the metrics listener only when
// --metrics.pprof asks for them, and the flag needs that listener.
func TestPprof(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		want  int
	}{
		{"off by default", nil, http.StatusNotFound},
		{"on", []string{"--metrics.pprof"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--data-dir=" + t.TempDir(), "--listen=127.0.0.1:0", "--http.listen=",
				"--metrics.listen=127.0.0.1:0", "--shutdown-timeout=5s"}, tc.flags...)
			cfg, err := app.Load(args, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			logs := &logtest.Buffer{}
			ctx, cancel := context.WithCancel(t.Context())
			a, err := app.New(ctx, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			ran := make(chan error, 1)
			go func() { ran <- a.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-ran })
			addrs := waitListeners(t, logs, "serving metrics", "serving")
			resp, err := http.Get("http://" + addrs["serving metrics"] + "/debug/pprof/cmdline")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("GET /debug/pprof/cmdline = %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	if _, err := app.Load([]string{"--metrics.pprof"}, func(string) string { return "" }); err == nil {
		t.Error("--metrics.pprof without --metrics.listen loaded, want an error")
	}
}
