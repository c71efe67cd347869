package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/logtest"
)

// TestRun builds the service from flags as the binary does, serves it and
// drains it: the listeners are logged in the order and shape launchers
// parse, health says SERVING while it runs, and Run returns nil when its
// context ends.
func TestRun(t *testing.T) {
	cfg, err := app.Load([]string{"--data-dir=" + t.TempDir(), "--listen=127.0.0.1:0", "--http.listen=127.0.0.1:0",
		"--metrics.listen=127.0.0.1:0", "--shutdown-timeout=5s"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := app.New(ctx, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()

	addrs := waitListeners(t, logs, "serving metrics", "serving http", "serving")
	conn, err := grpc.NewClient(addrs["serving"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, svc := range []string{"", "liveness", "skillsvc.v1.FilesystemService"} {
		resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %q = %v, %v; want SERVING", svc, resp.GetStatus(), err)
		}
	}

	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run = %v after its context ended, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of its context ending")
	}
}

// waitListeners waits for the listeners' log lines, which must come in
// the order of msgs, and returns their addresses by message.
func waitListeners(t *testing.T, logs *logtest.Buffer, msgs ...string) map[string]string {
	t.Helper()
	var order []string
	addrs := map[string]string{}
	for deadline := time.Now().Add(10 * time.Second); addrs["serving"] == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no serving line:\n%s", logs)
		}
		order, addrs = nil, map[string]string{}
		for line := range strings.Lines(logs.String()) {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "serving") && rec.Addr != "" {
				order = append(order, rec.Msg)
				addrs[rec.Msg] = rec.Addr
			}
		}
	}
	if got, want := strings.Join(order, ","), strings.Join(msgs, ","); got != want {
		t.Errorf("listeners logged as %s, want %s", got, want)
	}
	return addrs
}

// TestNewFails: a component that cannot start (here the audit log's file)
// fails New, which releases what it built before it.
func TestNewFails(t *testing.T) {
	cfg, err := app.Load([]string{"--data-dir=" + t.TempDir(), "--audit.output=" + t.TempDir() + "/no/such/dir/audit.log"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if a, err := app.New(t.Context(), cfg, slog.New(slog.DiscardHandler)); err == nil || a != nil {
		t.Errorf("New = %v, %v; want no App and an error", a, err)
	}
}
